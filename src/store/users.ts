import { createHash } from 'node:crypto';
import { nowIso } from '../clock.js';
import { sql } from 'kysely';
import { read, single, transaction } from '../db/run.js';
import { statement, type Params } from '../db/statement.js';
import type { Db, EntityRow, Role, UserRow } from '../db/types.js';
import { all, first } from '../db/work.js';

/** Console users (docs/console.md, Users and invites). Emails are compared and stored lower-case. */
export const normalEmail = (email: string): string => email.trim().toLowerCase();

const userByEmail = statement((db, p: Params<{ email: string }>) => db.selectFrom('users').selectAll().where('email', '=', p.email));
const userByInvite = statement((db, p: Params<{ inviteHash: string }>) => db.selectFrom('users').selectAll().where('invite_hash', '=', p.inviteHash));
const insertUser = statement((db, p: Params<Omit<UserRow, 'id'>>) => db.insertInto('users').values({
  entity_id: p.entity_id, email: p.email, role: p.role, password_hash: p.password_hash,
  invite_hash: p.invite_hash, invite_expires_at: p.invite_expires_at, created_at: p.created_at,
}).onConflict((oc) => oc.column('email').doNothing()).returningAll());
const setInvite = statement((db, p: Params<{ id: number; role: Role; inviteHash: string; expiresAt: string }>) => db.updateTable('users')
  .set({ role: p.role, invite_hash: p.inviteHash, invite_expires_at: p.expiresAt }).where('id', '=', p.id).returningAll());

/** An invite link is valid for 72 hours (docs/console.md, Users and invites). */
export const INVITE_TTL_MS = 72 * 60 * 60 * 1000;

export class EmailTaken extends Error {
  constructor(readonly entityId: number) {
    super(`this email belongs to a user of entity ${entityId}`);
  }
}

/**
 * Invites a person, or invites again (a forgotten password): a new invite replaces any open one; the
 * role changes only when given. One email belongs to one entity: another entity's email throws EmailTaken.
 */
export function inviteUser(db: Db, spec: { entityId: number; email: string; role: Role | undefined; inviteHash: string; expiresAt: string }): Promise<UserRow> {
  const email = normalEmail(spec.email);
  return transaction(db, function* () {
    for (;;) {
      const existing = yield* first(userByEmail, { email });
      if (existing) {
        if (existing.entity_id !== spec.entityId) throw new EmailTaken(existing.entity_id);
        return (yield* first(setInvite, { id: existing.id, role: spec.role ?? existing.role, inviteHash: spec.inviteHash, expiresAt: spec.expiresAt }))!;
      }
      const created = yield* first(insertUser, {
        entity_id: spec.entityId, email, role: spec.role ?? 'editor', password_hash: null,
        invite_hash: spec.inviteHash, invite_expires_at: spec.expiresAt, created_at: nowIso(),
      });
      // Invited at the same moment by another process: invite that user again.
      if (created) return created;
    }
  });
}

export const findUserByEmail = (db: Db, email: string): Promise<UserRow | undefined> => read(db, () => first(userByEmail, { email: normalEmail(email) }));

/** The user whose invite this is, while it is open (unused and not expired). */
export async function findInvite(db: Db, inviteHash: string, now = nowIso()): Promise<UserRow | undefined> {
  const user = await read(db, () => first(userByInvite, { inviteHash }));
  return user && user.invite_expires_at !== null && user.invite_expires_at > now ? user : undefined;
}

const acceptInviteOf = statement((db, p: Params<{ inviteHash: string; passwordHash: string; now: string }>) => db.updateTable('users')
  .set({ password_hash: p.passwordHash, invite_hash: null, invite_expires_at: null })
  .where('invite_hash', '=', p.inviteHash).where('invite_expires_at', '>', p.now).returningAll());
const endSessionsOf = statement((db, p: Params<{ userId: number }>) => db.deleteFrom('sessions').where('user_id', '=', p.userId));

/** Sets the password of an open invite (once: the link is spent) and ends the user's other sessions. */
export function acceptInvite(db: Db, inviteHash: string, passwordHash: string): Promise<UserRow | undefined> {
  return transaction(db, function* () {
    const user = yield* first(acceptInviteOf, { inviteHash, passwordHash, now: nowIso() });
    if (user) yield* all(endSessionsOf, { userId: user.id });
    return user;
  });
}

// An entity has a handful of users, but nothing bounds them: the operator's and the owner's list.
const usersOf = statement((db, p: Params<{ entityId: number }>) =>
  db.selectFrom('users').selectAll().where('entity_id', '=', p.entityId).orderBy('id'), { cost: 'scan' });
export const listUsers = (db: Db, entityId: number): Promise<UserRow[]> => read(db, () => all(usersOf, { entityId }));

const deleteUserRow = statement((db, p: Params<{ id: number }>) => db.deleteFrom('users').where('id', '=', p.id).returning('id'));

/** Removes a user and ends their sessions at once (the guard reads sessions on every request). */
export function removeUser(db: Db, email: string): Promise<boolean> {
  return transaction(db, function* () {
    const user = yield* first(userByEmail, { email: normalEmail(email) });
    if (!user) return false;
    yield* all(endSessionsOf, { userId: user.id });
    return (yield* first(deleteUserRow, { id: user.id })) !== undefined;
  });
}

// --- sessions ---

/** Idle and absolute lifetimes of a console session (docs/console.md, Signing in and sessions). */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const SESSION_MAX_MS = 14 * 24 * 60 * 60 * 1000;
/** last_seen_at is written at most this often: the idle limit is hours, a write per page view buys nothing. */
const SEEN_INTERVAL_MS = 60_000;

const insertSession = statement((db, p: Params<{ idHash: string; userId: number; at: string }>) =>
  db.insertInto('sessions').values({ id_hash: p.idHash, user_id: p.userId, created_at: p.at, last_seen_at: p.at }));
const deleteSession = statement((db, p: Params<{ idHash: string }>) => db.deleteFrom('sessions').where('id_hash', '=', p.idHash));
const sessionWithUser = statement((db, p: Params<{ idHash: string }>) => db.selectFrom('sessions')
  .innerJoin('users', 'users.id', 'sessions.user_id')
  .innerJoin('entities', 'entities.id', 'users.entity_id')
  .select([
    'sessions.created_at as session_created_at', 'sessions.last_seen_at',
    'users.id as user_id', 'users.email', 'users.role', 'entities.id as entity_id',
  ])
  .where('sessions.id_hash', '=', p.idHash));
const entityOfSession = statement((db, p: Params<{ id: number }>) => db.selectFrom('entities').selectAll().where('id', '=', p.id));
const seen = statement((db, p: Params<{ idHash: string; at: string }>) => db.updateTable('sessions').set({ last_seen_at: p.at }).where('id_hash', '=', p.idHash));

/** Starts a session for a user; `replacing` (the browser's previous session, if any) ends in the same transaction. */
export function startSession(db: Db, idHash: string, userId: number, replacing: string | undefined): Promise<void> {
  return transaction(db, function* () {
    if (replacing) yield* all(deleteSession, { idHash: replacing });
    yield* all(insertSession, { idHash, userId, at: nowIso() });
  });
}

export const endSession = (db: Db, idHash: string): Promise<void> => transaction(db, () => all(deleteSession, { idHash })).then(() => undefined);

export interface SignedIn {
  userId: number;
  email: string;
  role: Role;
  entity: EntityRow;
}

/**
 * The user of a live session, read from the database on every request (no cache: a removed user or a
 * paused entity is out at once, in every process). An expired session is deleted; a paused entity's
 * sessions are refused (the operator's pause also deletes them: `endSessionsOfEntity`).
 */
export async function sessionUser(db: Db, idHash: string, now = Date.now()): Promise<SignedIn | undefined> {
  const found = await read(db, function* () {
    const row = yield* first(sessionWithUser, { idHash });
    if (!row) return undefined;
    const entity = yield* first(entityOfSession, { id: row.entity_id });
    return entity && { row, entity };
  });
  if (!found) return undefined;
  const { row, entity } = found;
  const seenAt = Date.parse(row.last_seen_at);
  if (now - seenAt > SESSION_IDLE_MS || now - Date.parse(row.session_created_at) > SESSION_MAX_MS) {
    await endSession(db, idHash);
    return undefined;
  }
  if (entity.paused_at) return undefined;
  if (now - seenAt > SEEN_INTERVAL_MS) await transaction(db, () => all(seen, { idHash, at: new Date(now).toISOString() }));
  return { userId: row.user_id, email: row.email, role: row.role, entity };
}

// Sessions are few (a gallery's staff, a few devices each): the sweep reads the table in bounded batches.
const SESSION_SWEEP_BATCH = 500;
const expiredSessions = statement((db, p: Params<{ idleBefore: string; createdBefore: string }>) => db.deleteFrom('sessions')
  .where('id_hash', 'in', db.selectFrom('sessions').select('id_hash')
    .where((eb) => eb.or([eb('last_seen_at', '<', p.idleBefore), eb('created_at', '<', p.createdBefore)])).limit(SESSION_SWEEP_BATCH))
  .returning('id_hash'));

/**
 * Deletes sessions past their idle or absolute lifetime (the sweep `sweep_sessions`): one that is
 * used is already deleted as it is read; these are the ones nobody came back to.
 */
export async function deleteExpiredSessions(db: Db, now = Date.now()): Promise<number> {
  const bounds = { idleBefore: new Date(now - SESSION_IDLE_MS).toISOString(), createdBefore: new Date(now - SESSION_MAX_MS).toISOString() };
  let removed = 0;
  for (;;) {
    const chunk = (await transaction(db, () => all(expiredSessions, bounds))).length;
    removed += chunk;
    if (chunk < SESSION_SWEEP_BATCH) return removed;
  }
}

const sessionsOfEntity = statement((db, p: Params<{ entityId: number }>) => db.deleteFrom('sessions')
  .where('user_id', 'in', (q) => q.selectFrom('users').select('id').where('entity_id', '=', p.entityId)));

/** Ends every session of an entity's users (the entity is paused). An entity has few users and sessions. */
export const endSessionsOfEntity = (db: Db, entityId: number): Promise<void> =>
  transaction(db, () => all(sessionsOfEntity, { entityId })).then(() => undefined);

// --- sign-in failures and attempts (docs/deploy.md, Sign-in limits) ---

/** 10 failures of one email from one client address within 15 minutes lock that pair for 15 minutes. */
export const LOCK_FAILURES = 10;
export const LOCK_WINDOW_MS = 15 * 60 * 1000;
/** Every client address may try at most 20 sign-ins per 15 minutes, right or wrong. */
export const ADDRESS_ATTEMPTS = 20;
export const ADDRESS_WINDOW_MS = 15 * 60 * 1000;

/**
 * The key of a sign-in failure: the email and the client address together, hashed, so that a stranger's
 * wrong passwords lock the email only from the stranger's address, never the owner's.
 */
export const failureKey = (email: string, address: string): string => createHash('sha256').update(`${email}\n${address}`).digest('hex');

const failuresOf = statement((db, p: Params<{ emailHash: string }>) => db.selectFrom('login_failures').selectAll().where('email_hash', '=', p.emailHash));
/**
 * One failure counted in one statement, so concurrent failures are all counted (an attacker sends
 * them in parallel): a window older than 15 minutes starts again at 1; the tenth locks the email and
 * starts a new count. Every right-hand side reads the row as it was before the statement.
 */
const countFailure = statement((db, p: Params<{ emailHash: string; now: string; cutoff: string; lockedUntil: string }>) => {
  const counted = sql<number>`case when login_failures.window_start <= ${p.cutoff} then 1 else login_failures.failures + 1 end`;
  const locks = sql<boolean>`${counted} >= ${sql.lit(LOCK_FAILURES)}`;
  return db.insertInto('login_failures').values({ email_hash: p.emailHash, failures: 1, window_start: p.now, locked_until: null })
    .onConflict((oc) => oc.column('email_hash').doUpdateSet({
      failures: sql<number>`case when ${locks} then 0 else ${counted} end`,
      window_start: sql<string>`case when ${locks} or login_failures.window_start <= ${p.cutoff} then ${p.now} else login_failures.window_start end`,
      locked_until: sql<string | null>`case when ${locks} then ${p.lockedUntil} else login_failures.locked_until end`,
    }));
});
const clearFailures = statement((db, p: Params<{ emailHash: string }>) => db.deleteFrom('login_failures').where('email_hash', '=', p.emailHash));

/** `failureKey` of the email and address is locked. */
export async function isLocked(db: Db, emailHash: string, now = Date.now()): Promise<boolean> {
  const row = await read(db, () => first(failuresOf, { emailHash }));
  return row?.locked_until != null && Date.parse(row.locked_until) > now;
}

/** Counts a failure of an email from an address (`failureKey`); the tenth within 15 minutes locks the pair for 15 minutes. */
export function recordFailure(db: Db, emailHash: string, now = Date.now()): Promise<void> {
  const iso = (ms: number) => new Date(ms).toISOString();
  return single(db, () => all(countFailure, { emailHash, now: iso(now), cutoff: iso(now - LOCK_WINDOW_MS), lockedUntil: iso(now + LOCK_WINDOW_MS) })).then(() => undefined);
}

export const clearFailuresOf = (db: Db, emailHash: string): Promise<void> => transaction(db, () => all(clearFailures, { emailHash })).then(() => undefined);

/** One attempt of an address counted, in one statement (parallel attempts all count); answers the window as it now stands. */
const countAttempt = statement((db, p: Params<{ addressHash: string; now: string; cutoff: string }>) => db.insertInto('sign_in_addresses')
  .values({ address_hash: p.addressHash, attempts: 1, window_start: p.now })
  .onConflict((oc) => oc.column('address_hash').doUpdateSet({
    attempts: sql<number>`case when sign_in_addresses.window_start <= ${p.cutoff} then 1 else sign_in_addresses.attempts + 1 end`,
    window_start: sql<string>`case when sign_in_addresses.window_start <= ${p.cutoff} then ${p.now} else sign_in_addresses.window_start end`,
  }))
  .returning(['attempts', 'window_start']));

/**
 * Counts a sign-in attempt of a client address; answers how many seconds it must wait when this one
 * is past ADDRESS_ATTEMPTS in its window (the attempt is refused before any password is hashed), else
 * undefined.
 */
export async function countAttemptOf(db: Db, address: string, now = Date.now()): Promise<number | undefined> {
  const iso = (ms: number) => new Date(ms).toISOString();
  const addressHash = createHash('sha256').update(address).digest('hex');
  const rows = await single(db, () => all(countAttempt, { addressHash, now: iso(now), cutoff: iso(now - ADDRESS_WINDOW_MS) }));
  const row = rows[0];
  if (!row || Number(row.attempts) <= ADDRESS_ATTEMPTS) return undefined;
  return Math.max(1, Math.ceil((Date.parse(row.window_start) + ADDRESS_WINDOW_MS - now) / 1000));
}

const purgeFailures = statement((db, p: Params<{ cutoff: string; now: string }>) => db.deleteFrom('login_failures')
  .where('window_start', '<=', p.cutoff).where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<=', p.now)])));
const purgeAttempts = statement((db, p: Params<{ cutoff: string }>) => db.deleteFrom('sign_in_addresses').where('window_start', '<=', p.cutoff));

/**
 * Deletes the failure and attempt rows whose window has passed (and whose lock has ended): a row per
 * random email a stranger types would otherwise stay for good. Run at most once a minute per process.
 */
export function purgeSignInRows(db: Db, now = Date.now()): Promise<void> {
  const iso = (ms: number) => new Date(ms).toISOString();
  return transaction(db, function* () {
    yield* all(purgeFailures, { cutoff: iso(now - LOCK_WINDOW_MS), now: iso(now) });
    yield* all(purgeAttempts, { cutoff: iso(now - ADDRESS_WINDOW_MS) });
  }).then(() => undefined);
}
