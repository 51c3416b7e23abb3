import Type, { type Static } from 'typebox';
import { RecordImage, imageStatusQuery } from './images.js';
import {
  CurrencyCode, HttpUrl, Id, LongText, Nullable, Page, ReadOnlyEcho, Ref, StringEnum, Text, Timestamp, cursorQuery, pageQuery,
} from './common.js';

export const AVAILABILITY = ['available', 'reserved', 'sold'] as const;
export type Availability = (typeof AVAILABILITY)[number];

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
};

const readOnlyFields = {
  id: ReadOnlyEcho(),
  // The platform's copy of the image (decisions §10): GET returns it, a client may send it back.
  image: ReadOnlyEcho(),
  source_fingerprint: ReadOnlyEcho(),
  last_synced_at: ReadOnlyEcho(),
  created_at: ReadOnlyEcho(),
  updated_at: ReadOnlyEcho(),
};

export const ARTWORK_EXAMPLE = {
  title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990, medium: 'Oil on canvas',
  dimensions: '200 x 160 cm', price: 1200000, currency: 'EUR', availability: 'available',
  image_url: 'https://gallery.example/img/ap-1990.jpg', external_url: 'https://gallery.example/works/ap-1990',
};

export const ArtworkPost = Type.Object(
  { title: Title, ...optionalFields, ...readOnlyFields },
  { additionalProperties: false, examples: [ARTWORK_EXAMPLE] },
);
export type ArtworkPostBody = Static<typeof ArtworkPost>;

export const ArtworkPut = Type.Object(
  { title: Type.Optional(Title), ...optionalFields, ...readOnlyFields },
  { additionalProperties: false, examples: [{ price: 950000, availability: 'reserved' }] },
);
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
  // Last: the list's JSON comes from the database and gets `image` added after its columns.
  image: RecordImage,
};

export const ArtworkListItem = Type.Object(listedFields, { $id: 'ArtworkListItem', description: 'An artwork as a list shows it.' });
export type ArtworkListItemType = Static<typeof ArtworkListItem>;

export const Artwork = Type.Object(
  {
    ...listedFields,
    description: Nullable(Type.String()),
    external_url: Nullable(Type.String()),
    source_fingerprint: Type.String({ description: 'SHA-256 of slug(artist_name)|slug(title)|year.' }),
    last_synced_at: Timestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Artwork', description: 'An artwork of the key\'s entity, with every field.' },
);
export type ArtworkType = Static<typeof Artwork>;
export type ArtworkFields = Omit<ArtworkType, 'id' | 'image' | 'source_fingerprint' | 'last_synced_at' | 'created_at' | 'updated_at'>;

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
