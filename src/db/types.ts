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
  /** The highest key tier the entity's console may create (docs/console.md, Users and invites); the operator sets it. */
  plan: Generated<'free' | 'subscriber' | 'partner'>;
  /** The currency of prices that name none (ISO 4217; migration 018). */
  default_currency: Generated<string | null>;
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
  availability: 'available' | 'reserved' | 'sold' | 'not_for_sale' | null;
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
  /** The entity's own inventory or stock number; unique per entity where set (docs/api.md, Artworks). */
  external_id: string | null;
  /** Migration 012 (docs/api.md, Artworks: the art data galleries keep). */
  price_display: Generated<'shown' | 'on_request' | 'hidden'>;
  height: number | null;
  width: number | null;
  depth: number | null;
  dimension_unit: 'cm' | 'mm' | 'in' | null;
  edition_size: number | null;
  edition_number: number | null;
  artist_proofs: number | null;
  image_alt: string | null;
  /** Canonical JSON text of the views ([{url, caption, alt, role}, …]); null when there are none. */
  additional_images: string | null;
  /** The feed that created the work or whose row last changed it (migration 019); null for others. */
  feed_id: Generated<number | null>;
}

/** One additional view's URL per row (migration 012): which records use an image URL, by index. */
export interface ArtworkViewsTable {
  artwork_id: number;
  position: number;
  url: string;
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
  /** The slug algorithm's version the slug was derived with (docs/api.md, Slugs and fingerprints). */
  slug_version: number;
  last_synced_at: string;
  created_at: string;
  updated_at: string;
  /** The feed that created the event or whose row last changed it (migration 019); null for others. */
  feed_id: Generated<number | null>;
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
  /** The run the write belongs to (migration 019): a console import's Apply, a feed run, an undo. */
  run_id: Generated<number | null>;
}

/** A deleted artwork or event until the purge (migration 019); `record` is its row as JSON text. */
export interface TrashTable {
  id: Generated<number>;
  owner_id: number;
  kind: 'artworks' | 'events';
  record_id: number;
  title: string;
  artist_name: string | null;
  image_url: string | null;
  record: string;
  deleted_at: string;
  deleted_by: string;
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
  /** Migration 018. */
  not_for_sale: number;
  events: number;
  changelog: number;
  artworks_synced_at: string | null;
  events_synced_at: string | null;
  artists_synced_at: string | null;
  /** Writes recorded; the sum over an entity's slots changes with every committed write. */
  version: number;
}

export type Role = 'owner' | 'editor' | 'viewer';

/** A console user (docs/console.md, Users and invites); email lower-case and unique platform-wide. */
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
  /** One line (docs/api.md, Images) when failed. */
  error: string | null;
  checked_at: string | null;
  /** SHA-256 of the original's bytes once it was processed (image_originals). */
  hash: string | null;
  /** Failures since the last success, the URL's first use or `images retry` (its next try is its job's `due_at`). */
  attempts: number;
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

/** A webhook receiver of an entity (migration 014). */
export interface WebhookEndpointsTable {
  id: Generated<number>;
  owner_id: number;
  url: string;
  /** `*` or the subscribed types, space-separated. */
  events: string;
  description: string;
  /** 1 or 0. */
  enabled: number;
  disabled_reason: string | null;
  /** `whsec_` + base64 of 32 bytes: it signs, so it is kept; never logged, never listed. */
  secret: string;
  old_secret: string | null;
  old_secret_expires_at: string | null;
  /** The first failed message since the last delivered one. */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookMessageStatus = 'pending' | 'delivered' | 'failed';

/** A message to one endpoint (migration 014). */
export interface WebhookMessagesTable {
  seq: Generated<number>;
  /** The `webhook-id` it is sent with, `msg_` + 32 hex digits. */
  id: string;
  endpoint_id: number;
  owner_id: number;
  type: string;
  change_id: number | null;
  record_kind: string | null;
  record_id: number | null;
  image_url: string | null;
  /** The body's `data` as JSON text, once made. */
  data: string | null;
  status: WebhookMessageStatus;
  attempts: Generated<number>;
  created_at: string;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  message_seq: number;
  at: string;
  status_code: number | null;
  duration_ms: number;
  /** The first 1 KB of the response body. */
  response: string | null;
  error: string | null;
}

/**
 * A durable job of any kind (migration 011, src/jobs/README.md): images, feed runs, webhook messages.
 * `due_at` is when it may be taken; while a process works on it, `claim` names that process's claim
 * and `due_at` is the end of its lease (renewed while it works), so a job whose process died is due
 * again once the lease has passed.
 */
export interface JobsTable {
  id: Generated<number>;
  kind: string;
  /** One job per (kind, key): enqueuing the same key again finds the job already queued. */
  key: string;
  /** The entity the job is done for: jobs are taken round-robin between entities. */
  entity_id: number;
  /** Jobs of one group (a webhook endpoint) run at most the kind's group cap at once. */
  grp: string | null;
  /** JSON, the kind's own. */
  payload: string | null;
  /** Failures so far (the handler's retry schedule). */
  attempts: number;
  /** Times the job was taken (a job whose process dies every time still ends). */
  claims: number;
  due_at: string;
  claim: string | null;
  created_at: string;
}

/** A job given up or ended with a failed outcome (migration 020): the gauges' "failed in the last hour". */
export interface JobFailuresTable {
  id: Generated<number>;
  kind: string;
  entity_id: number;
  key: string;
  error: string;
  at: string;
}

/** When each entity was last served a job of a kind: the least recently served entity goes first. */
export interface JobTurnsTable {
  kind: string;
  entity_id: number;
  turn: string;
}

/** A feed (docs/api.md, Feeds); `mapping` is JSON text `{"File column": "field" | null}`. */
export interface FeedsTable {
  id: Generated<number>;
  entity_id: number;
  url: string;
  kind: 'artworks' | 'events';
  mapping: string;
  encoding: 'utf-8' | 'windows-1252';
  sheet: string | null;
  mode: 'merge' | 'mirror';
  interval_minutes: number;
  paused: number;
  paused_reason: string | null;
  etag: string | null;
  last_modified: string | null;
  body_hash: string | null;
  failures: Generated<number>;
  run_now_at: string | null;
  created_at: string;
  /** 1 when `mapping` names every column the feed reads (migration 018): nothing more is suggested. */
  mapping_frozen: Generated<number>;
}

export type FeedRunStatus = 'queued' | 'running' | 'unchanged' | 'applied' | 'needs_attention' | 'failed';

/** One run of a feed; `counts`, `problems` and `new_columns` are JSON text. */
export interface FeedRunsTable {
  id: Generated<number>;
  /** Null for runs of no feed (console imports, undos: migration 019). */
  feed_id: number | null;
  status: FeedRunStatus;
  queued_at: string;
  started_at: string | null;
  finished_at: string | null;
  http_status: number | null;
  counts: string | null;
  problems: string | null;
  error: string | null;
  new_columns: string | null;
  /** Migration 019: every run's table (feed runs, console imports, undos). */
  entity_id: number | null;
  kind: Generated<'feed' | 'import' | 'undo'>;
  record_kind: 'artworks' | 'events' | null;
  source: string | null;
  undo_of: number | null;
  undone_by: number | null;
  pending_deletes: string | null;
}

export interface Database {
  entities: EntitiesTable;
  api_keys: ApiKeysTable;
  artists: ArtistsTable;
  artworks: ArtworksTable;
  artwork_views: ArtworkViewsTable;
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
  webhook_endpoints: WebhookEndpointsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_attempts: WebhookAttemptsTable;
  jobs: JobsTable;
  job_turns: JobTurnsTable;
  job_failures: JobFailuresTable;
  feeds: FeedsTable;
  feed_runs: FeedRunsTable;
  trash: TrashTable;
}

export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
export type EntityRow = Selectable<EntitiesTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ArtworkRow = Selectable<ArtworksTable>;
export type EventRow = Selectable<EventsTable>;
export type TrashRow = Selectable<TrashTable>;
export type ChangelogRow = Selectable<ChangelogTable>;
export type UserRow = Selectable<UsersTable>;
export type SessionRow = Selectable<SessionsTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookMessageRow = Selectable<WebhookMessagesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;
