import Type, { type Static } from 'typebox';
import { Id, LongText, Nullable, ReadOnlyEcho, StringEnum } from './common.js';

export const ENTITY_TYPES = ['gallery', 'artist'] as const;
export type EntityKind = (typeof ENTITY_TYPES)[number];

/** A URL field of the profile: `null` or `""` clears it. */
const ClearableUrl = Nullable(Type.String({
  format: 'uri-or-empty', maxLength: 2048, description: 'Absolute http or https URL; "" or null clears it.',
}));

export const ProfilePut = Type.Object(
  {
    description: Type.Optional(Nullable(LongText)),
    external_url: Type.Optional(ClearableUrl),
    ical_url: Type.Optional(ClearableUrl),
    social_instagram: Type.Optional(ClearableUrl),
    social_photo: Type.Optional(ClearableUrl),
    social_twitter: Type.Optional(ClearableUrl),
    social_micro: Type.Optional(ClearableUrl),
    default_currency: Type.Optional(Nullable(Type.String({
      format: 'iso4217', description: 'The currency of imported prices that name none (ISO 4217, such as EUR, any case); `null` clears it.',
    }))),
    id: ReadOnlyEcho(),
    type: ReadOnlyEcho(),
    name: ReadOnlyEcho(),
    slug: ReadOnlyEcho(),
    location_city: ReadOnlyEcho('Read only: changed by the operator.'),
    location_country: ReadOnlyEcho('Read only: changed by the operator.'),
    created_at: ReadOnlyEcho(),
    updated_at: ReadOnlyEcho(),
  },
  {
    additionalProperties: false,
    description: 'Every field is optional; only the fields sent change. social_photo is an alias of social_instagram, social_micro of social_twitter.',
    examples: [{ description: 'Contemporary painting since 1972.', ical_url: 'https://gallery.example/events.ics' }],
  },
);
export type ProfilePutBody = Static<typeof ProfilePut>;

export const Profile = Type.Object(
  {
    id: Id,
    type: StringEnum(ENTITY_TYPES),
    name: Type.String(),
    slug: Type.String(),
    description: Nullable(Type.String()),
    external_url: Nullable(Type.String()),
    ical_url: Nullable(Type.String()),
    social_instagram: Nullable(Type.String()),
    social_photo: Nullable(Type.String({ description: 'Same value as social_instagram.' })),
    social_twitter: Nullable(Type.String()),
    social_micro: Nullable(Type.String({ description: 'Same value as social_twitter.' })),
    location_city: Nullable(Type.String()),
    location_country: Nullable(Type.String()),
    default_currency: Nullable(Type.String({ description: 'The currency of imported prices that name none (docs/push.md, How values are read).' })),
  },
  { $id: 'Profile', description: 'The profile of the key\'s entity (a gallery or an artist).' },
);
export type ProfileType = Static<typeof Profile>;

export const ProfileUpdated = Type.Object(
  { ...Profile.properties, updated: Type.Literal(true) },
  { $id: 'ProfileUpdated', description: 'The whole profile after the change.' },
);
