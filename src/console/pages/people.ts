import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Role } from '../../db/types.js';
import { newSecret, sha256 } from '../../domain/passwords.js';
import { isEmailAddress } from '../../domain/text.js';
import { EmailTaken, INVITE_TTL_MS, inviteUser, listUsers } from '../../store/users.js';
import { html, type Html } from '../../web/html.js';
import { csrfField, heading, notice, render, table, when } from '../layout.js';

const ROLES: readonly Role[] = ['viewer', 'editor', 'owner'];

async function peoplePage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, top: Html | string = '', status = 200) {
  const users = await listUsers(app.db, request.user.entity.id);
  const rows = users.map((u) => [u.email, u.role, u.password_hash ? 'active' : html`invited, link valid until ${when(u.invite_expires_at)}`]);
  return render(request, reply, {
    title: 'People', section: 'people', status,
    body: html`${heading('People', 'Who can use this console. Viewers read; editors also edit and import; owners also manage keys and people.')}
${top}
${table('People', ['Email', 'Role', 'Status'], rows)}
<h2 id="invite">Invite someone</h2>
<form method="post" action="/console/people" class="stack panel">
${csrfField(reply)}
<div class="field"><label for="email">Email</label><input id="email" name="email" type="email" autocomplete="off" required></div>
<div class="field"><label for="role">Role</label><select id="role" name="role">${ROLES.map((r) => html`<option value="${r}"${r === 'editor' ? html` selected` : ''}>${r}</option>`)}</select></div>
<p class="hint">Inviting someone again sends them a new link: the way to reset a forgotten password.</p>
<div><button type="submit">Invite</button></div>
</form>`,
  });
}

/** People (owner): the entity's console users, and invites from the console (docs/console.md, People). */
export async function peoplePages(app: FastifyInstance): Promise<void> {
  app.get('/people', { config: { role: 'owner' } }, async (request, reply) => peoplePage(app, request, reply));

  app.post<{ Body: Record<string, string | undefined> }>('/people', { config: { role: 'owner' } }, async (request, reply) => {
    const email = String(request.body?.email ?? '').trim();
    const role = String(request.body?.role ?? '') as Role;
    if (!isEmailAddress(email)) return peoplePage(app, request, reply, notice('error', 'Enter an email address.'), 400);
    if (!ROLES.includes(role)) return peoplePage(app, request, reply, notice('error', 'Choose a role.'), 400);
    const token = newSecret();
    try {
      await inviteUser(app.db, { entityId: request.user.entity.id, email, role, inviteHash: sha256(token), expiresAt: new Date(Date.now() + INVITE_TTL_MS).toISOString() });
    } catch (error) {
      if (error instanceof EmailTaken) return peoplePage(app, request, reply, notice('error', 'This email cannot be invited here: it belongs to another account on the platform.'), 409);
      throw error;
    }
    const link = `${app.config.publicBaseUrl}/console/invite/${token}`;
    return peoplePage(app, request, reply, html`${notice('ok', `Invited ${email}.`)}<section class="panel" aria-labelledby="link"><h2 id="link">Their invite link</h2>
<p>Send it to them yourself; it works once, for 72 hours, and is not shown again.</p><p class="secret">${link}</p></section>`);
  });
}
