import Type, { type Static } from 'typebox';
import {
  CountryCode, HttpUrl, Id, IsoDate, LongText, Nullable, Page, QueryBoolean, ReadOnlyEcho, StringEnum, Text,
  Timestamp, pageQuery,
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

export const EventPost = Type.Object(
  {
    title: Type.String({ minLength: 1, description: '1 to 500 characters after trimming; stored trimmed.' }),
    ...eventFields,
    id: ReadOnlyEcho(),
    slug: ReadOnlyEcho(),
    last_synced_at: ReadOnlyEcho(),
    created_at: ReadOnlyEcho(),
    updated_at: ReadOnlyEcho(),
  },
  {
    additionalProperties: false,
    examples: [EVENT_EXAMPLE],
  },
);
export type EventPostBody = Static<typeof EventPost>;
export const WRITABLE_EVENT_FIELDS = ['title', ...Object.keys(eventFields)] as (keyof EventFields)[];

const listedFields = {
  id: Id,
  title: Type.String(),
  event_type: Nullable(EventType),
  location_city: Nullable(Type.String()),
  location_country: Nullable(Type.String()),
  start_date: Nullable(Type.String()),
  end_date: Nullable(Type.String()),
};
export const EventListItem = Type.Object(listedFields);

export const Event = Type.Object(
  {
    ...listedFields,
    slug: Type.String(),
    description: Nullable(Type.String()),
    external_url: Nullable(Type.String()),
    image_url: Nullable(Type.String()),
    ical_url: Nullable(Type.String()),
    last_synced_at: Timestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Event' },
);
export type EventType = Static<typeof Event>;
export type EventFields = Omit<EventType, 'id' | 'slug' | 'last_synced_at' | 'created_at' | 'updated_at'>;

export const EventPostResult = Type.Object({
  id: Id,
  title: Type.String(),
  slug: Type.String(),
  created: Type.Boolean({ description: 'true when no event of this entity had the slug.' }),
  last_synced_at: Timestamp,
});

export const EventListQuery = Type.Object({
  ...pageQuery(50, 100),
  upcoming: Type.Optional(QueryBoolean),
  past: Type.Optional(QueryBoolean),
});

export const EventList = Type.Object({ events: Type.Array(EventListItem), ...Page });
