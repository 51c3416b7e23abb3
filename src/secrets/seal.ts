import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { loadServerKey } from './server-key.js';

/**
 * Secrets the service must use again (webhook signing secrets) stored encrypted: AES-256-GCM under a
 * key derived from the server key (src/secrets/server-key.ts), so a copy of the database alone (a
 * backup, a dump, a read-only leak) does not reveal them. A sealed value is `aes256gcm:` and the base64
 * of the 12-byte nonce, the 16-byte tag and the ciphertext.
 */
export const SEALED_PREFIX = 'aes256gcm:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
// Each use of the server key gets a key of its own; this one is for stored secrets.
const PURPOSE = 'art-catalog stored secrets v1';

let cached: { material: string; key: Buffer } | undefined;

/** The sealing key for `material` (default: the server key), derived once per process. */
function keyFor(material?: string): Buffer {
  const source = material ?? loadServerKeyOnce();
  if (cached?.material !== source) cached = { material: source, key: Buffer.from(hkdfSync('sha256', source, '', PURPOSE, 32)) };
  return cached.key;
}

let serverKey: string | undefined;
const loadServerKeyOnce = () => (serverKey ??= loadServerKey());

/**
 * Loads the server key now (and generates its file if need be), so that a server with a short
 * SECRET_KEY or an unreadable key file stops at its start with a one-line message, not at the
 * first webhook it signs.
 */
export function prepareServerKey(): void {
  keyFor();
}

export const isSealed = (stored: string): boolean => stored.startsWith(SEALED_PREFIX);

/** `secret` encrypted for storage. */
export function seal(secret: string, material?: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyFor(material), nonce);
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64');
}

/**
 * The secret a stored value holds. Throws when it was sealed under another key (the server key
 * changed): the operator must restore the key, not have messages signed with garbage.
 */
export function unseal(stored: string, material?: string): string {
  if (!isSealed(stored)) throw new Error('stored secret is not sealed (run `art-catalog migrate`)');
  const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', keyFor(material), raw.subarray(0, NONCE_BYTES));
  decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch (error) {
    throw new Error('a stored secret does not open with this server key (SECRET_KEY / SECRET_KEY_FILE changed?)', { cause: error });
  }
}
