/** The scopes and tiers of API keys (docs/api.md, Authentication). */
export const SCOPES = [
  'artworks:read', 'artworks:write',
  'events:read', 'events:write',
  'profile:read', 'profile:write',
  'webhooks:read', 'webhooks:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const TIERS = ['free', 'subscriber', 'partner'] as const;
export type Tier = (typeof TIERS)[number];
