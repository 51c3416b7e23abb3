import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HashesBusy, PASSWORD_MAX, PASSWORD_MIN, hashPassword, newSecret, sha256, verifyPassword } from '../../domain/passwords.js';
import { limitedClient } from '../../http-common/client-address.js';
import { findEntity } from '../../store/entities.js';
import {
  SESSION_MAX_MS, acceptInvite, clearFailuresOf, countAttemptOf, endSession, failureKey, findInvite, findUserByEmail, isLocked, normalEmail,
  purgeSignInRows, recordFailure, startSession,
} from '../../store/users.js';
import { html, type Html } from '../../web/html.js';
import { consoleCookies } from '../guard.js';
import { csrfField, heading, notice, render } from '../layout.js';

type Form = Record<string, string | undefined>;

/** One answer for an unknown email, a wrong password, a locked email and a paused gallery (docs/console.md, Signing in and sessions). */
const SIGN_IN_REFUSED = 'That email and password do not match an account, or sign-in is paused for a while after too many attempts. Try again, or ask for a new invite.';

/** A sign-in or a password chosen while HASHES_AT_ONCE hashes run and more wait (docs/deploy.md, Sign-in limits). */
const HASHES_BUSY = 'Many people are signing in right now. Try again in a moment.';
const PURGE_EVERY_MS = 60_000;

/** Only a path inside the console may be the page shown after signing in (no open redirect). */
const nextPage = (raw: string | undefined): string => (raw && /^\/console(?:[/?][^\\]*)?$/.test(raw) && !raw.startsWith('//') ? raw : '/console');

function signInForm(reply: FastifyReply, next: string, problem?: string): Html {
  return html`${heading('Sign in', 'Your gallery\'s console: artworks, events, imports and API keys.')}
${problem ? notice('error', problem) : ''}
<form method="post" action="/console/sign-in" class="stack panel">
${csrfField(reply)}
<input type="hidden" name="next" value="${next}">
<div class="field"><label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required></div>
<div class="field"><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required></div>
<div><button type="submit">Sign in</button></div>
</form>
<p class="lead">No password yet? Your gallery's owner or the platform operator sends you an invite link.</p>`;
}

function passwordForm(reply: FastifyReply, email: string, action: string, problem?: string): Html {
  return html`${heading('Choose a password', html`for <strong>${email}</strong>`)}
${problem ? notice('error', problem) : ''}
<form method="post" action="${action}" class="stack panel">
${csrfField(reply)}
<input type="text" name="username" value="${email}" autocomplete="username" hidden>
<div class="field"><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN}" required aria-describedby="password-hint">
<span class="hint" id="password-hint">At least ${PASSWORD_MIN} characters. A few unrelated words make a good one.</span></div>
<div><button type="submit">Set password and sign in</button></div>
</form>`;
}

const invalidInvite = (request: FastifyRequest, reply: FastifyReply) => render(request, reply, {
  title: 'Invite no longer valid', status: 410,
  body: html`${heading('This invite link is no longer valid')}<p>It has been used already, or it is older than 72 hours. Ask whoever invited you for a new one.</p><p><a href="/console/sign-in">Sign in</a></p>`,
});

/** Sign-in, sign-out and accepting an invite: the only console pages open to anyone. */
export async function sessionPages(app: FastifyInstance): Promise<void> {
  const cookies = consoleCookies(app.config.publicBaseUrl);
  const { secure } = cookies;

  /**
   * A new session with a new random id (never one the browser brought: fixation), replacing the
   * browser's previous one. The CSRF secret is renewed with it.
   */
  async function signIn(request: FastifyRequest, reply: FastifyReply, userId: number, next: string) {
    const id = newSecret();
    const previous = request.cookies[cookies.session];
    await startSession(app.db, sha256(id), userId, previous ? sha256(previous) : undefined);
    reply.setCookie(cookies.session, id, { path: '/', httpOnly: true, sameSite: 'lax', secure, maxAge: SESSION_MAX_MS / 1000 });
    reply.clearCookie(cookies.csrf, { path: cookies.csrfPath, secure });
    return reply.code(303).header('location', next).send();
  }

  app.get<{ Querystring: { next?: string } }>('/sign-in', { config: { role: 'anyone' } }, async (request, reply) =>
    render(request, reply, { title: 'Sign in', body: signInForm(reply, nextPage(request.query.next)) }));

  let purged = 0;
  /**
   * Sign-in, bounded (docs/deploy.md, Sign-in limits): every attempt of a client address is counted
   * first (past 20 in 15 minutes: 429, no password hashed); the 10-failure lock counts the email from
   * this address only; hashes wait for one of the process's few turns (none within 2 s: 503).
   */
  app.post<{ Body: Form }>('/sign-in', { config: { role: 'anyone' } }, async (request, reply) => {
    const next = nextPage(request.body?.next);
    const address = limitedClient(request);
    if (Date.now() - purged > PURGE_EVERY_MS) {
      purged = Date.now();
      await purgeSignInRows(app.db);
    }
    const wait = await countAttemptOf(app.db, address);
    if (wait !== undefined) {
      reply.header('retry-after', String(wait));
      return render(request, reply, {
        title: 'Sign in', status: 429,
        body: signInForm(reply, next, `Too many sign-in attempts from your network. Try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? 's' : ''}.`),
      });
    }
    const email = normalEmail(String(request.body?.email ?? ''));
    const password = String(request.body?.password ?? '');
    const key = failureKey(email, address);
    if (email !== '' && password.length <= PASSWORD_MAX && !(await isLocked(app.db, key))) {
      const user = await findUserByEmail(app.db, email);
      let matches: boolean;
      try {
        // An unknown email costs a hash too, so the answer's timing does not tell which emails exist.
        matches = await verifyPassword(password, user?.password_hash ?? null);
      } catch (error) {
        if (!(error instanceof HashesBusy)) throw error;
        reply.header('retry-after', '1');
        return render(request, reply, { title: 'Sign in', status: 503, body: signInForm(reply, next, HASHES_BUSY) });
      }
      const entity = user && matches ? await findEntity(app.db, user.entity_id) : undefined;
      if (user && matches && entity && !entity.paused_at) {
        await clearFailuresOf(app.db, key);
        return signIn(request, reply, user.id, next);
      }
      await recordFailure(app.db, key);
    }
    return render(request, reply, { title: 'Sign in', status: 401, body: signInForm(reply, next, SIGN_IN_REFUSED) });
  });

  app.post('/sign-out', { config: { role: 'viewer' } }, async (request, reply) => {
    const id = request.cookies[cookies.session];
    if (id) await endSession(app.db, sha256(id));
    reply.clearCookie(cookies.session, { path: '/', secure });
    reply.clearCookie(cookies.csrf, { path: cookies.csrfPath, secure });
    return reply.code(303).header('location', '/console/sign-in').send();
  });

  app.get<{ Params: { token: string } }>('/invite/:token', { config: { role: 'anyone' } }, async (request, reply) => {
    const user = await findInvite(app.db, sha256(request.params.token));
    if (!user) return invalidInvite(request, reply);
    return render(request, reply, { title: 'Choose a password', body: passwordForm(reply, user.email, request.url) });
  });

  app.post<{ Params: { token: string }; Body: Form }>('/invite/:token', { config: { role: 'anyone' } }, async (request, reply) => {
    const inviteHash = sha256(request.params.token);
    const user = await findInvite(app.db, inviteHash);
    if (!user) return invalidInvite(request, reply);
    const password = String(request.body?.password ?? '');
    if ([...password].length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
      const problem = password.length > PASSWORD_MAX ? `The password is too long (at most ${PASSWORD_MAX} characters).` : `The password must be at least ${PASSWORD_MIN} characters long.`;
      return render(request, reply, { title: 'Choose a password', status: 400, body: passwordForm(reply, user.email, request.url, problem) });
    }
    let hash: string;
    try {
      hash = await hashPassword(password);
    } catch (error) {
      if (!(error instanceof HashesBusy)) throw error;
      reply.header('retry-after', '1');
      return render(request, reply, { title: 'Choose a password', status: 503, body: passwordForm(reply, user.email, request.url, HASHES_BUSY) });
    }
    const accepted = await acceptInvite(app.db, inviteHash, hash);
    // Spent by a second tab meanwhile.
    if (!accepted) return invalidInvite(request, reply);
    return signIn(request, reply, accepted.id, '/console');
  });
}
