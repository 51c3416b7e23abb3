import { newSecret, sha256 } from '../../src/domain/passwords.js';
import type { Role } from '../../src/db/types.js';
import { inviteUser } from '../../src/store/users.js';
import type { TestApp } from './app.js';

export const PASSWORD = 'correct horse battery staple';

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

/** A signed-in user of `role`: invited, password chosen through the invite page. */
export async function signedIn(t: TestApp, base: string, entityId: number, role: Role): Promise<ConsoleSession & { email: string }> {
  const { email, token } = await invite(t, entityId, role);
  const session = new ConsoleSession(base);
  await session.get(`/console/invite/${token}`);
  const accepted = await session.post(`/console/invite/${token}`, { password: PASSWORD });
  if (accepted.status !== 303) throw new Error(`invite answered ${accepted.status}: ${accepted.text.slice(0, 300)}`);
  await session.get('/console');
  return Object.assign(session, { email });
}
