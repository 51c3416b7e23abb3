import type { Generated, Kysely, Selectable, Transaction } from 'kysely';

/**
 * One interface per table. Timestamps are UTC ISO 8601 strings with milliseconds (they sort as text
 * on both dialects), dates are YYYY-MM-DD strings, `field_changes` is JSON text.
 */
export interface EntitiesTable {
  id: Generated<number>;
  type: 'gallery' | 'artist';
  name: string;
  slug: string;
  description: string | null;
  external_url: string | null;
  ical_url: string | null;
  social_instagram: string | null;
  social_twitter: string | null;
  location_city: string | null;
  location_country: string | null;
  paused_at: string | null;
  /** The highest key tier the entity's console may create (decisions §11); the operator sets it. */
  plan: Generated<'free' | 'subscriber' | 'partner'>;
  created_at: string;
  updated_at: string;
}

export interface ApiKeysTable {
  id: Generated<number>;
  entity_id: number;
  prefix: string;
  key_hash: string;
  tier: 'free' | 'subscriber' | 'partner';
  /** Space-separated scope names. */
  scopes: string;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  last_used_at: string | null;
}

export interface ArtistsTable {
  id: Generated<number>;
  name: string;
  slug: string;
  created_at: string;
}

export interface ArtworksTable {
  id: Generated<number>;
  entity_id: number;
  title: string;
  creation_year: number | null;
  medium: string | null;
  dimensions: string | null;
  price: number | null;
  currency: string | null;
  availability: 'available' | 'reserved' | 'sold' | null;
  description: string | null;
  image_url: string | null;
  external_url: string | null;
  artist_name: string | null;
  artist_id: number | null;
  /** When the current artist was linked; feeds the `artists` sync status. */
  artist_linked_at: string | null;
  source_fingerprint: string;
  fingerprint_version: number;
  last_synced_at: string;
  created_at: string;
  updated_at: string;
  /** The entity's own inventory or stock number; unique per entity where set (decisions §5). */
  external_id: string | null;
}

export interface EventsTable {
  id: Generated<number>;
  entity_id: number;
  title: string;
  slug: string;
  event_type: 'exhibition' | 'opening' | 'talk' | 'workshop' | 'other' | null;
  description: string | null;
  location_city: string | null;
  location_country: string | null;
  start_date: string | null;
  end_date: string | null;
  external_url: string | null;
  image_url: string | null;
  ical_url: string | null;
  /** The slug algorithm's version the slug was derived with (decisions §4). */
  slug_version: number;
  last_synced_at: string;
  created_at: string;
  updated_at: string;
}

export interface ChangelogTable {
  id: Generated<number>;
  /** The entity whose changelog holds the entry (the writer), not the changed record. */
  owner_id: number;
  entity_type: 'artwork' | 'artist' | 'event' | 'profile';
  record_id: number;
  action: 'create' | 'update' | 'delete';
  source: string;
  field_changes: string;
  created_at: string;
}

export interface IdempotencyKeysTable {
  id: Generated<number>;
  api_key_id: number;
  key: string;
  request_hash: string;
  state: 'in_flight' | 'done';
  status: number | null;
  /** The serialized response body of a done request. */
  body: string | null;
  created_at: string;
  /** An in-flight claim older than this was abandoned (a crash) and may be taken over. */
  locked_until: string;
}

export interface EntityStatsTable {
  entity_id: number;
  /** PostgreSQL: the slot of the connection that wrote the deltas (migration 006); SQLite: 0. */
  slot: number;
  artworks: number;
  available: number;
  reserved: number;
  sold: number;
  events: number;
  changelog: number;
  artworks_synced_at: string | null;
  events_synced_at: string | null;
  artists_synced_at: string | null;
  /** Writes recorded; the sum over an entity's slots changes with every committed write. */
  version: number;
}

export type Role = 'owner' | 'editor' | 'viewer';

/** A console user (decisions §11); email lower-case and unique platform-wide. */
export interface UsersTable {
  id: Generated<number>;
  entity_id: number;
  email: string;
  role: Role;
  /** Null until the invite is accepted. */
  password_hash: string | null;
  /** SHA-256 of the open invite's token; null once used. */
  invite_hash: string | null;
  invite_expires_at: string | null;
  created_at: string;
}

export interface SessionsTable {
  /** SHA-256 of the session id; the id itself lives only in the browser's cookie. */
  id_hash: string;
  user_id: number;
  created_at: string;
  last_seen_at: string;
}

/** Sign-in failures of one email (known or not), keyed by the SHA-256 of the lower-cased address. */
export interface LoginFailuresTable {
  email_hash: string;
  failures: number;
  window_start: string;
  locked_until: string | null;
}

export interface SignInAddressesTable {
  address_hash: string;
  attempts: number;
  window_start: string;
}

export type ImageStatus = 'pending' | 'ready' | 'failed';

/** An image URL in use and its job (migration 007). */
export interface ImagesTable {
  url: string;
  status: ImageStatus;
  /** One line (decisions §10) when failed. */
  error: string | null;
  checked_at: string | null;
  /** SHA-256 of the original's bytes once it was processed (image_originals). */
  hash: string | null;
  /** Failures since the last success, the URL's first use or `images retry`. */
  attempts: number;
  /** When the job may run next; null: nothing to do. */
  due_at: string | null;
  /** The claim of the process working on it, and until when that claim holds. */
  claim: string | null;
  locked_until: string | null;
  created_at: string;
}

export interface ImageOriginalsTable {
  hash: string;
  width: number;
  height: number;
  /** JSON array of { name, width, height, format }. */
  derivatives: string;
  created_at: string;
}

export interface Database {
  entities: EntitiesTable;
  api_keys: ApiKeysTable;
  artists: ArtistsTable;
  artworks: ArtworksTable;
  events: EventsTable;
  changelog: ChangelogTable;
  idempotency_keys: IdempotencyKeysTable;
  entity_stats: EntityStatsTable;
  users: UsersTable;
  sessions: SessionsTable;
  login_failures: LoginFailuresTable;
  sign_in_addresses: SignInAddressesTable;
  images: ImagesTable;
  image_originals: ImageOriginalsTable;
}

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
export type EntityRow = Selectable<EntitiesTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ArtworkRow = Selectable<ArtworksTable>;
export type EventRow = Selectable<EventsTable>;
export type ChangelogRow = Selectable<ChangelogTable>;
export type UserRow = Selectable<UsersTable>;
export type SessionRow = Selectable<SessionsTable>;
