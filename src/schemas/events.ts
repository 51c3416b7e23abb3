import Type, { type Static } from 'typebox';
import { RecordImage, imageStatusQuery } from './images.js';
import {
  CountryCode, HttpUrl, Id, IsoDate, LongText, Nullable, Page, QueryBoolean, ReadOnlyEcho, Ref, StringEnum, Text,
  Timestamp, WriteBodies, cursorQuery, pageQuery,
} from './common.js';

export const EVENT_TYPES = ['exhibition', 'opening', 'talk', 'workshop', 'other'] as const;
const EventType = StringEnum(EVENT_TYPES);

const eventFields = {
  event_type: Type.Optional(Nullable(EventType)),
  description: Type.Optional(Nullable(LongText)),
  location_city: Type.Optional(Nullable(Text)),
  location_country: Type.Optional(Nullable(CountryCode)),
  start_date: Type.Optional(Nullable(IsoDate)),
  end_date: Type.Optional(Nullable(IsoDate)),
  external_url: Type.Optional(Nullable(HttpUrl)),
  image_url: Type.Optional(Nullable(HttpUrl)),
  ical_url: Type.Optional(Nullable(HttpUrl)),
};

export const EVENT_EXAMPLE = {
  title: 'Summer Exhibition', event_type: 'exhibition', location_city: 'Berlin', location_country: 'DE',
  start_date: '2027-06-01', end_date: '2027-08-31', external_url: 'https://gallery.example/summer',
};

const EventTitle = Type.String({ minLength: 1, description: '1 to 500 characters after trimming; stored trimmed.' });
const readOnlyFields = {
  id: ReadOnlyEcho(),
  // The platform's copy of the image (docs/api.md, Images): GET returns it, a client may send it back.
  image: ReadOnlyEcho(),
  slug: ReadOnlyEcho(),
  feed_id: ReadOnlyEcho(),
  last_synced_at: ReadOnlyEcho(),
  created_at: ReadOnlyEcho(),
  updated_at: ReadOnlyEcho(),
};

/** PUT /v1/events/:id (docs/api.md, Events): any writable field; null clears; title cannot be cleared. */
export const { post: EventPost, put: EventPut } = WriteBodies(EventTitle, { ...eventFields, ...readOnlyFields }, {
  post: EVENT_EXAMPLE, put: { title: 'Summer Exhibition 2027', end_date: '2027-09-15' },
});
export type EventPostBody = Static<typeof EventPost>;
export type EventPutBody = Static<typeof EventPut>;
export const WRITABLE_EVENT_FIELDS = ['title', ...Object.keys(eventFields)] as (keyof EventFields)[];

const listedFields = {
  id: Id,
  title: Type.String(),
  event_type: Nullable(EventType),
  location_city: Nullable(Type.String()),
  location_country: Nullable(Type.String()),
  start_date: Nullable(Type.String()),
  end_date: Nullable(Type.String()),
  image: RecordImage,
};
export const EventListItem = Type.Object(listedFields, { $id: 'EventListItem', description: 'An event as a list shows it.' });
export type EventListItemType = Static<typeof EventListItem>;

export const Event = Type.Object(
  {
    ...listedFields,
    slug: Type.String(),
    description: Nullable(Type.String()),
    external_url: Nullable(Type.String()),
    image_url: Nullable(Type.String({ description: 'Exactly as sent; pages and clients use `image`, the platform\'s copy.' })),
    ical_url: Nullable(Type.String()),
    feed_id: Nullable(Type.Integer({ minimum: 1, description: 'The feed that created the event or whose row last changed it; null for others.' })),
    last_synced_at: Timestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Event', description: 'An event of the key\'s entity, with every field.' },
);
export type EventType = Static<typeof Event>;
export type EventFields = Omit<EventType, 'id' | 'slug' | 'feed_id' | 'image' | 'last_synced_at' | 'created_at' | 'updated_at'>;

export const EventPostResult = Type.Object({
  id: Id,
  title: Type.String(),
  slug: Type.String(),
  created: Type.Boolean({ description: 'true when no event of this entity had the slug.' }),
  last_synced_at: Timestamp,
}, { $id: 'EventPostResult', description: 'What POST /v1/events answers: the event it created or updated.' });

export const EventListQuery = Type.Object({
  ...pageQuery(50, 100),
  ...cursorQuery,
  upcoming: Type.Optional(QueryBoolean),
  past: Type.Optional(QueryBoolean),
  ...imageStatusQuery,
});

export const EventList = Type.Object(
  { events: Type.Array(Ref(EventListItem)), ...Page },
  { $id: 'EventList', description: 'A page of events: in id order, or by start date with `upcoming` or `past`.' },
);
