import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Console passwords (docs/console.md, Signing in and sessions), hashed with scrypt from node:crypto: memory-hard, part of every
 * supported Node.js (no native add-on, no per-platform binary to download), and run on libuv's thread
 * pool, off the event loop. Cost: one of OWASP's equivalent scrypt settings, N=2^15, r=8, p=3: the
 * least memory per hash (32 MiB) of them, so that a burst of sign-ins does not press a small server.
 * The parameters are stored with each hash, so they can be raised later without a migration.
 */
const COST: Required<Pick<ScryptOptions, 'N' | 'r' | 'p'>> = { N: 2 ** 15, r: 8, p: 3 };
const KEY_BYTES = 32;
export const PASSWORD_MIN = 12;
/** Longer inputs are refused before hashing: a megabyte of "password" costs nothing to send. */
export const PASSWORD_MAX = 1_000;

/**
 * At most 4 hashes at once per process (docs/deploy.md, Sign-in limits): each takes a thread of
 * libuv's pool, which also serves file reads (the image store) and DNS; a burst of sign-ins would
 * otherwise take all four threads. A hash beyond them waits at most HASH_WAIT_MS for a turn, then is
 * refused with HashesBusy (a 503: try again in a moment).
 */
export const HASHES_AT_ONCE = 4;
export const HASH_WAIT_MS = 2_000;

export class HashesBusy extends Error {
  constructor() {
    super('too many sign-ins at once');
  }
}

let hashing = 0;
const waiting: (() => void)[] = [];

/** Hashes running now in this process (metrics, tests). */
export const hashesRunning = (): number => hashing;

async function hashTurn(): Promise<void> {
  if (hashing < HASHES_AT_ONCE) {
    hashing++;
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const turn = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      waiting.splice(waiting.indexOf(turn), 1);
      reject(new HashesBusy());
    }, HASH_WAIT_MS);
    waiting.push(turn);
  });
}

function endTurn(): void {
  // The turn passes straight to the longest waiting hash; `hashing` counts it still.
  const next = waiting.shift();
  if (next) next();
  else hashing--;
}

async function derive(password: string, salt: Buffer, cost: typeof COST): Promise<Buffer> {
  await hashTurn();
  try {
    return await deriveNow(password, salt, cost);
  } finally {
    endTurn();
  }
}

function deriveNow(password: string, salt: Buffer, cost: typeof COST): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // scrypt needs 128·N·r bytes; Node's default ceiling (32 MiB) is below that.
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, { ...cost, maxmem: 256 * cost.N * cost.r }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `password` matches `stored`; a missing hash is checked against a dummy one so that it takes as long. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = (stored ?? DUMMY).split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return stored !== null && key.length === expected.length && timingSafeEqual(key, expected);
}

const DUMMY = ['scrypt', COST.N, COST.r, COST.p, 'AAAAAAAAAAAAAAAAAAAAAA', 'A'.repeat(43)].join('$');

/** A secret for a link or a cookie: 256 random bits, base64url. */
export const newSecret = (): string => randomBytes(32).toString('base64url');

/** How a secret (session id, invite token) or an email of a login failure is stored. */
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
