import Type from 'typebox';
import { Id, Nullable, StringEnum, Timestamp } from './common.js';
import { ENTITY_TYPES } from './profile.js';
import { SCOPES, TIERS } from './keys.js';

export const Me = Type.Object({
  entity: Type.Object({
    id: Id, type: StringEnum(ENTITY_TYPES), name: Type.String(), slug: Type.String(),
    default_currency: Nullable(Type.String({ description: 'The profile\'s currency for imported prices that name none (`push` reads it here).' })),
  }),
  key: Type.Object({
    prefix: Type.String(),
    tier: StringEnum(TIERS),
    scopes: Type.Array(StringEnum(SCOPES)),
    expires_at: Nullable(Timestamp),
    created_at: Timestamp,
  }),
  rate_limit: Type.Object({
    limit: Type.Integer(),
    remaining: Type.Integer(),
    reset: Type.Integer({ description: 'Unix epoch seconds when the window resets.' }),
  }),
}, { $id: 'Me', description: 'The calling key: its entity, tier, scopes and rate-limit state.' });
