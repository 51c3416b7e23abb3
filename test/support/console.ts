import { newSecret, sha256 } from '../../src/domain/passwords.js';
import type { Role } from '../../src/db/types.js';
import { acceptInvite, inviteUser } from '../../src/store/users.js';
import type { TestApp } from './app.js';

export const PASSWORD = 'correct horse battery staple';

/**
 * PASSWORD hashed once, ahead of time, at scrypt N=2^10 (the stored hash names its own cost, so sign-in verifies it
 * in about a millisecond instead of the production cost's 0.3 s). For tests that need a signed-in user and are not
 * about passwords: a test helper, not a switch in the product; hashing at production cost is what the invite page's
 * own tests (console-session, console-security) go through.
 */
export const PASSWORD_HASH = 'scrypt$1024$8$1$c2FsdC1mb3ItdGVzdHMtbw$fesI1NRRxQM68I6iiHDtIuQBavBKYemBhdR0kWTyAU0';

export interface Answer {
  status: number;
  text: string;
  headers: Headers;
  location: string | null;
}

/**
 * A browser without the browser: real HTTP to a listening app, a cookie jar, redirects not followed
 * (tests look at them), and the page's CSRF token kept from the last page that had one.
 */
export class ConsoleSession {
  readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(readonly base: string) {}

  private remember(headers: Headers) {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(method: string, path: string, body?: URLSearchParams | FormData, headers: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(this.base + path, {
      method, redirect: 'manual', body: body ?? null,
      headers: { ...(this.cookies.size ? { cookie: this.cookieHeader() } : {}), ...headers },
    });
    this.remember(response.headers);
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text);
    if (token) this.csrf = token[1]!;
    return { status: response.status, text, headers: response.headers, location: response.headers.get('location') };
  }

  get(path: string): Promise<Answer> {
    return this.request('GET', path);
  }

  /** A form post with the current CSRF token (unless the fields give their own `_csrf`). */
  post(path: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Answer> {
    return this.request('POST', path, new URLSearchParams({ _csrf: this.csrf, ...fields }), headers);
  }

  /** Opens the sign-in page (for its CSRF token) and signs in. */
  async signIn(email: string, password = PASSWORD): Promise<Answer> {
    await this.get('/console/sign-in');
    return this.post('/console/sign-in', { email, password });
  }
}

let users = 0;

/** An invite as `user invite` makes it; answers the token of the link. */
export async function invite(t: TestApp, entityId: number, role: Role, email = `user${++users}-${Date.now()}@gallery.example`) {
  const token = newSecret();
  await inviteUser(t.handle.db, { entityId, email, role, inviteHash: sha256(token), expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
  return { email, token };
}

/**
 * A signed-in user of `role`: invited, the invite accepted in the store with PASSWORD_HASH (no scrypt at production
 * cost), then signed in through the sign-in form as a browser would.
 */
export async function signedIn(t: TestApp, base: string, entityId: number, role: Role): Promise<ConsoleSession & { email: string }> {
  const { email, token } = await invite(t, entityId, role);
  if (!await acceptInvite(t.handle.db, sha256(token), PASSWORD_HASH)) throw new Error(`the invite of ${email} was not accepted`);
  const session = new ConsoleSession(base);
  const signed = await session.signIn(email);
  if (signed.status !== 303) throw new Error(`sign-in answered ${signed.status}: ${signed.text.slice(0, 300)}`);
  await session.get('/console');
  return Object.assign(session, { email });
}

/** A file uploaded on the Import page as a browser sends it: the page's form action (with its token), then the multipart post. */
export async function uploadToImport(session: ConsoleSession, name: string, bytes: Buffer, kind = 'artworks'): Promise<Answer> {
  const page = await session.get('/console/import');
  const action = /action="(\/console\/import\?_csrf=[^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
  const form = new FormData();
  form.append('kind', kind);
  form.append('file', new Blob([new Uint8Array(bytes)]), name);
  return session.request('POST', action, form);
}
