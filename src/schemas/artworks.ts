import Type, { type Static } from 'typebox';
import { RecordImage, imageStatusQuery } from './images.js';
import {
  CurrencyCode, HttpUrl, Id, LongText, Nullable, Page, ReadOnlyEcho, Ref, StringEnum, Text, Timestamp, WriteBodies, cursorQuery, pageQuery,
} from './common.js';

/** `not_for_sale`: on loan, in a private collection, kept by the gallery; public pages show no price or offer (docs/api.md, Artworks). */
export const AVAILABILITY = ['available', 'reserved', 'sold', 'not_for_sale'] as const;
export type Availability = (typeof AVAILABILITY)[number];
export const PRICE_DISPLAY = ['shown', 'on_request', 'hidden'] as const;
export type PriceDisplay = (typeof PRICE_DISPLAY)[number];
export const DIMENSION_UNITS = ['cm', 'mm', 'in'] as const;
export const VIEW_ROLES = ['detail', 'installation', 'verso', 'frame', 'other'] as const;
/** At most this many additional views of a work. */
export const VIEWS_MAX = 20;
export const ALT_MAX = 500;

const Title = Type.String({ minLength: 1, description: '1 to 500 characters after trimming; stored trimmed.' });
const CreationYear = Type.Integer({ minimum: -3000, description: 'From -3000 to next year (UTC).' });
const Price = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'A whole number.' });
const Availability = StringEnum(AVAILABILITY);
const ArtistName = Type.String({ maxLength: 1000, description: 'Resolved to a platform-wide artist record.' });
const ExternalId = Type.String({
  minLength: 1, maxLength: 100,
  description: 'Your own inventory or stock number, unique in your catalog: it tells apart works the fingerprint cannot (editions, "Untitled"). Matched before the fingerprint on POST.',
  examples: ['ED-1990-3/50'],
});

const PriceDisplayField = StringEnum(PRICE_DISPLAY, {
  description: 'What public pages and JSON-LD show of the price: `shown` (default), `on_request` ("Price on request") or `hidden`. The API always returns `price` to your keys. `null` on PUT restores `shown`.',
});
const Measure = (name: string) => Type.Number({
  exclusiveMinimum: 0, maximum: 1_000_000,
  description: `The ${name} in \`dimension_unit\`, greater than 0, at most 2 decimals. Read from \`dimensions\` when a write gives only the text.`,
});
const DimensionUnit = StringEnum(DIMENSION_UNITS, { description: 'The unit of height, width and depth.' });
const EditionSize = Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'How many numbered copies the edition has.' });
const EditionNumber = Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'This copy\'s number, at most `edition_size`.' });
const ArtistProofs = Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Artist\'s proofs beside the edition ("+5 AP").' });
const Alt = Type.String({ maxLength: ALT_MAX, description: 'The image\'s text alternative for people who cannot see it (at most 500 characters).' });
const ViewRole = StringEnum(VIEW_ROLES);

/** One more view of the work, as written. */
const ViewWritten = Type.Object({
  url: HttpUrl,
  caption: Type.Optional(Nullable(Text)),
  alt: Type.Optional(Nullable(Alt)),
  role: Type.Optional(Nullable(ViewRole)),
  image: ReadOnlyEcho(),
}, { additionalProperties: false });

/** The optional writable fields; `null` means "not sent" on POST and "clear" on PUT. */
const optionalFields = {
  creation_year: Type.Optional(Nullable(CreationYear)),
  medium: Type.Optional(Nullable(Text)),
  dimensions: Type.Optional(Nullable(Text)),
  price: Type.Optional(Nullable(Price)),
  currency: Type.Optional(Nullable(CurrencyCode)),
  availability: Type.Optional(Nullable(Availability)),
  description: Type.Optional(Nullable(LongText)),
  image_url: Type.Optional(Nullable(HttpUrl)),
  external_url: Type.Optional(Nullable(HttpUrl)),
  artist_name: Type.Optional(Nullable(ArtistName)),
  external_id: Type.Optional(Nullable(ExternalId)),
  price_display: Type.Optional(Nullable(PriceDisplayField)),
  height: Type.Optional(Nullable(Measure('height'))),
  width: Type.Optional(Nullable(Measure('width'))),
  depth: Type.Optional(Nullable(Measure('depth'))),
  dimension_unit: Type.Optional(Nullable(DimensionUnit)),
  edition_size: Type.Optional(Nullable(EditionSize)),
  edition_number: Type.Optional(Nullable(EditionNumber)),
  artist_proofs: Type.Optional(Nullable(ArtistProofs)),
  image_alt: Type.Optional(Nullable(Alt)),
  additional_images: Type.Optional(Nullable(Type.Array(ViewWritten, {
    maxItems: VIEWS_MAX,
    description: 'More views of the work, in the order pages show them (at most 20): each `url` goes through the image pipeline like `image_url`. `null` or `[]` removes them all.',
  }))),
};

const readOnlyFields = {
  id: ReadOnlyEcho(),
  // The platform's copy of the image (docs/api.md, Images): GET returns it, a client may send it back.
  image: ReadOnlyEcho(),
  source_fingerprint: ReadOnlyEcho(),
  feed_id: ReadOnlyEcho(),
  last_synced_at: ReadOnlyEcho(),
  created_at: ReadOnlyEcho(),
  updated_at: ReadOnlyEcho(),
};

export const ARTWORK_EXAMPLE = {
  title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990, medium: 'Oil on canvas',
  dimensions: '200 x 160 cm', price: 1200000, currency: 'EUR', availability: 'available',
  image_url: 'https://gallery.example/img/ap-1990.jpg', external_url: 'https://gallery.example/works/ap-1990',
};

export const { post: ArtworkPost, put: ArtworkPut } = WriteBodies(Title, { ...optionalFields, ...readOnlyFields }, {
  post: ARTWORK_EXAMPLE, put: { price: 950000, availability: 'reserved' },
});
export type ArtworkPostBody = Static<typeof ArtworkPost>;
export type ArtworkPutBody = Static<typeof ArtworkPut>;

export const WRITABLE_ARTWORK_FIELDS = ['title', ...Object.keys(optionalFields)] as (keyof ArtworkFields)[];

const listedFields = {
  id: Id,
  title: Type.String(),
  creation_year: Nullable(Type.Integer()),
  medium: Nullable(Type.String()),
  dimensions: Nullable(Type.String()),
  price: Nullable(Type.Integer()),
  currency: Nullable(Type.String()),
  availability: Nullable(Availability),
  artist_name: Nullable(Type.String()),
  image_url: Nullable(Type.String({ description: 'Exactly as sent; pages and clients use `image`, the platform\'s copy.' })),
  external_id: Nullable(Type.String()),
  price_display: PriceDisplayField,
  // Last: the list's JSON comes from the database and gets `image` added after its columns.
  image: RecordImage,
};

export const ArtworkView = Type.Object({
  url: Type.String({ description: 'Exactly as sent.' }),
  caption: Nullable(Type.String()),
  alt: Nullable(Type.String()),
  role: Nullable(ViewRole),
  image: RecordImage,
}, { $id: 'ArtworkView', description: 'One more view of an artwork (a detail, the verso, an installation view), with its image\'s state.' });
export type ArtworkViewType = Static<typeof ArtworkView>;

export const ArtworkListItem = Type.Object(listedFields, { $id: 'ArtworkListItem', description: 'An artwork as a list shows it.' });
export type ArtworkListItemType = Static<typeof ArtworkListItem>;

export const Artwork = Type.Object(
  {
    ...listedFields,
    description: Nullable(Type.String()),
    external_url: Nullable(Type.String()),
    height: Nullable(Type.Number()),
    width: Nullable(Type.Number()),
    depth: Nullable(Type.Number()),
    dimension_unit: Nullable(DimensionUnit),
    edition_size: Nullable(Type.Integer()),
    edition_number: Nullable(Type.Integer()),
    artist_proofs: Nullable(Type.Integer()),
    image_alt: Nullable(Type.String()),
    additional_images: Type.Array(Ref(ArtworkView), { description: 'The additional views in order, each with the platform\'s copy (`image`); `[]` when there are none.' }),
    source_fingerprint: Type.String({ description: 'SHA-256 of slug(artist_name)|slug(title)|year.' }),
    feed_id: Nullable(Type.Integer({ minimum: 1, description: 'The feed that created the work or whose row last changed it; null for the console\'s, imports\' and the API\'s (a feed\'s mirror deletes only its own).' })),
    last_synced_at: Timestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Artwork', description: 'An artwork of the key\'s entity, with every field.' },
);
export type ArtworkType = Static<typeof Artwork>;
/** The writable fields as the domain holds them: the views as canonical JSON text (the stored column). */
export type ArtworkFields = Omit<ArtworkType, 'id' | 'image' | 'source_fingerprint' | 'feed_id' | 'last_synced_at' | 'created_at' | 'updated_at' | 'additional_images'>
  & { additional_images: string | null };
export type ViewInput = Static<typeof ViewWritten>;

export const ArtworkPostResult = Type.Object({
  id: Id,
  title: Type.String(),
  source_fingerprint: Type.String(),
  created: Type.Boolean({ description: 'true when the fingerprint was new.' }),
  last_synced_at: Timestamp,
}, { $id: 'ArtworkPostResult', description: 'What POST /v1/artworks answers: the artwork it created or updated.' });

/** The largest `limit` of an artwork list. */
export const ARTWORK_PAGE_MAX = 100;

export const ArtworkListQuery = Type.Object({ ...pageQuery(50, ARTWORK_PAGE_MAX), ...cursorQuery, availability: Type.Optional(Availability), ...imageStatusQuery });

export const ArtworkList = Type.Object(
  { artworks: Type.Array(Ref(ArtworkListItem)), ...Page },
  { $id: 'ArtworkList', description: 'A page of artworks in id order.' },
);

export const Deleted = Type.Object(
  { deleted: Type.Literal(true), id: Id },
  { $id: 'Deleted', description: 'The record is gone; its deletion is in the changelog.' },
);
