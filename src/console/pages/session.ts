import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PASSWORD_MAX, PASSWORD_MIN, hashPassword, newSecret, sha256, verifyPassword } from '../../domain/passwords.js';
import { findEntity } from '../../store/entities.js';
import {
  SESSION_MAX_MS, acceptInvite, clearFailuresOf, endSession, findInvite, findUserByEmail, isLocked, normalEmail, recordFailure, startSession,
} from '../../store/users.js';
import { html, type Html } from '../../web/html.js';
import { SESSION_COOKIE, secureCookies } from '../guard.js';
import { csrfField, heading, notice, render } from '../layout.js';

type Form = Record<string, string | undefined>;

/** One answer for an unknown email, a wrong password, a locked email and a paused gallery (docs/console.md, Signing in and sessions). */
const SIGN_IN_REFUSED = 'That email and password do not match an account, or sign-in is paused for a while after too many attempts. Try again, or ask for a new invite.';

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
  const secure = secureCookies(app.config.publicBaseUrl);

  /**
   * A new session with a new random id (never one the browser brought: fixation), replacing the
   * browser's previous one. The CSRF secret is renewed with it.
   */
  async function signIn(request: FastifyRequest, reply: FastifyReply, userId: number, next: string) {
    const id = newSecret();
    const previous = request.cookies[SESSION_COOKIE];
    await startSession(app.db, sha256(id), userId, previous ? sha256(previous) : undefined);
    reply.setCookie(SESSION_COOKIE, id, { path: '/', httpOnly: true, sameSite: 'lax', secure, maxAge: SESSION_MAX_MS / 1000 });
    reply.clearCookie('console_csrf', { path: '/console' });
    return reply.code(303).header('location', next).send();
  }

  app.get<{ Querystring: { next?: string } }>('/sign-in', { config: { role: 'anyone' } }, async (request, reply) =>
    render(request, reply, { title: 'Sign in', body: signInForm(reply, nextPage(request.query.next)) }));

  app.post<{ Body: Form }>('/sign-in', { config: { role: 'anyone' } }, async (request, reply) => {
    const email = normalEmail(String(request.body?.email ?? ''));
    const password = String(request.body?.password ?? '');
    const emailHash = sha256(email);
    if (email !== '' && password.length <= PASSWORD_MAX && !(await isLocked(app.db, emailHash))) {
      const user = await findUserByEmail(app.db, email);
      // An unknown email costs a hash too, so the answer's timing does not tell which emails exist.
      const matches = await verifyPassword(password, user?.password_hash ?? null);
      const entity = user && matches ? await findEntity(app.db, user.entity_id) : undefined;
      if (user && matches && entity && !entity.paused_at) {
        await clearFailuresOf(app.db, emailHash);
        return signIn(request, reply, user.id, nextPage(request.body?.next));
      }
      await recordFailure(app.db, emailHash);
    }
    return render(request, reply, { title: 'Sign in', status: 401, body: signInForm(reply, nextPage(request.body?.next), SIGN_IN_REFUSED) });
  });

  app.post('/sign-out', { config: { role: 'viewer' } }, async (request, reply) => {
    const id = request.cookies[SESSION_COOKIE];
    if (id) await endSession(app.db, sha256(id));
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    reply.clearCookie('console_csrf', { path: '/console' });
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
    const accepted = await acceptInvite(app.db, inviteHash, await hashPassword(password));
    // Spent by a second tab meanwhile.
    if (!accepted) return invalidInvite(request, reply);
    return signIn(request, reply, accepted.id, '/console');
  });
}
