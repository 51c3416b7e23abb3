import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  DEFAULT_ROLL_GRACE, PREFIX_FORMAT, ROLL_GRACE, SCOPES, TIERS, TIER_SCOPES, tierWithin, type RollGrace, type Scope, type Tier,
} from '../../domain/keys.js';
import type { ApiKeyRow } from '../../db/types.js';
import { createKey, findEntityKey, isLive, keyScopes, listKeys, revokeKey, rollKey } from '../../store/keys.js';
import { html, type Html } from '../../web/html.js';
import { csrfField, heading, notice, render, table, when } from '../layout.js';

type Form = Record<string, string | string[] | undefined>;

const GRACE_LABELS: Record<RollGrace, string> = { '1h': 'in 1 hour', '24h': 'in 24 hours', '7d': 'in 7 days', now: 'now' };

function status(row: ApiKeyRow): Html {
  if (row.revoked_at) return html`<span class="badge badge-failed">revoked</span>`;
  if (!isLive(row)) return html`<span class="badge">expired</span>`;
  return row.expires_at ? html`<span class="badge badge-reserved">expires ${when(row.expires_at)}</span>` : html`<span class="badge badge-ready">active</span>`;
}

function actions(reply: FastifyReply, row: ApiKeyRow): Html | null {
  if (!isLive(row)) return null;
  const id = `grace-${row.prefix}`;
  return html`<div class="row-actions">
<form method="post" action="/console/keys/${row.prefix}/roll" class="row-actions">${csrfField(reply)}
<label for="${id}">Old key expires</label><select id="${id}" name="expire_old_in">${Object.keys(ROLL_GRACE).map((g) => html`<option value="${g}"${g === DEFAULT_ROLL_GRACE ? html` selected` : ''}>${GRACE_LABELS[g as RollGrace]}</option>`)}</select>
<button type="submit" class="secondary">Roll</button></form>
<form method="post" action="/console/keys/${row.prefix}/revoke" class="inline-form">${csrfField(reply)}<button type="submit" class="danger" data-confirm="Revoke ${row.prefix}? Programs using it get 401 at once.">Revoke</button></form>
</div>`;
}

/** The key shown once, on the page that follows its creation or roll (docs/console.md, Keys). */
const shownOnce = (key: string, what: string): Html => html`${notice('ok', what)}
<section class="panel" aria-labelledby="new-key"><h2 id="new-key">Your new key</h2>
<p>Copy it now and keep it somewhere safe: it is shown this once and never again (only its hash is stored).</p>
<p class="secret">${key}</p></section>`;

async function keysPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, top: Html | string = '', status_ = 200) {
  const { entity } = request.user;
  const keys = await listKeys(app.db, entity.id);
  const tiers = TIERS.filter((t) => tierWithin(t, entity.plan));
  const revoked = (request.query as Record<string, string | undefined>).revoked;
  const rows = keys.map((k) => [html`<code>${k.prefix}</code>`, k.tier, keyScopes(k).join(', '), when(k.last_used_at), status(k), actions(reply, k)]);
  return render(request, reply, {
    title: 'Keys', section: 'keys', status: status_,
    body: html`${heading('API keys', html`Keys let your website or inventory system sync with the catalog. Your plan: <strong>${entity.plan}</strong>.`)}
${revoked ? notice('ok', `Key ${revoked} was revoked.`) : ''}
${top}
${table('API keys', ['Prefix', 'Tier', 'Scopes', 'Last used', 'Status', 'Actions'], rows, 'No keys yet.')}
<h2 id="create">Create a key</h2>
<form method="post" action="/console/keys" class="stack panel">
${csrfField(reply)}
<div class="field"><label for="tier">Tier</label><select id="tier" name="tier">${tiers.map((t) => html`<option value="${t}"${t === 'subscriber' ? html` selected` : ''}>${t}</option>`)}</select>
<span class="hint">Your plan allows up to ${entity.plan}. A free key can only read.</span></div>
<fieldset class="field"><legend>Scopes</legend><div class="checks">${SCOPES.map((s) => html`<label><input type="checkbox" name="scopes" value="${s}"${s.endsWith(':read') ? html` checked` : ''}> ${s}</label>`)}</div>
<span class="hint">Give a key only what its program needs.</span></fieldset>
<div><button type="submit">Create key</button></div>
</form>`,
  });
}

const list = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** Keys (owner): list, create within the plan, roll, revoke (docs/console.md, Keys). */
export async function keyPages(app: FastifyInstance): Promise<void> {
  app.get('/keys', { config: { role: 'owner' } }, async (request, reply) => keysPage(app, request, reply));

  app.post<{ Body: Form }>('/keys', { config: { role: 'owner' } }, async (request, reply) => {
    const { entity } = request.user;
    const tier = String(request.body?.tier ?? '') as Tier;
    const scopes = [...new Set(list(request.body?.scopes))] as Scope[];
    const problem = !TIERS.includes(tier) ? 'Choose a tier.'
      : !tierWithin(tier, entity.plan) ? `Your plan (${entity.plan}) does not include ${tier} keys.`
        : scopes.length === 0 ? 'Choose at least one scope.'
          : scopes.find((s) => !TIER_SCOPES[tier].includes(s)) ? `A ${tier} key cannot have the scope ${scopes.find((s) => !TIER_SCOPES[tier].includes(s))}.`
            : undefined;
    if (problem) return keysPage(app, request, reply, notice('error', problem), 400);
    const { key, row } = await createKey(app.db, { entityId: entity.id, tier, scopes, expiresAt: null });
    return keysPage(app, request, reply, shownOnce(key, `Key ${row.prefix} created.`));
  });

  app.post<{ Params: { prefix: string }; Body: Form }>('/keys/:prefix/roll', { config: { role: 'owner' } }, async (request, reply) => {
    const grace = String(request.body?.expire_old_in ?? DEFAULT_ROLL_GRACE) as RollGrace;
    if (!PREFIX_FORMAT.test(request.params.prefix)) return keysPage(app, request, reply, notice('error', 'No working key has that prefix.'), 404);
    if (!(grace in ROLL_GRACE)) return keysPage(app, request, reply, notice('error', 'Choose when the old key expires.'), 400);
    const rolled = await rollKey(app.db, request.params.prefix, new Date(Date.now() + ROLL_GRACE[grace]).toISOString(), request.user.entity.id);
    if (!rolled) return keysPage(app, request, reply, notice('error', 'That key no longer works, so it cannot be rolled.'), 404);
    return keysPage(app, request, reply, shownOnce(rolled.key, `Key ${rolled.old.prefix} rolled: the new key is ${rolled.row.prefix}; the old one expires ${GRACE_LABELS[grace]}.`));
  });

  app.post<{ Params: { prefix: string } }>('/keys/:prefix/revoke', { config: { role: 'owner' } }, async (request, reply) => {
    const prefix = request.params.prefix;
    if (!PREFIX_FORMAT.test(prefix)) return keysPage(app, request, reply, notice('error', 'No working key has that prefix.'), 404);
    const key = await findEntityKey(app.db, request.user.entity.id, prefix);
    if (!key || !(await revokeKey(app.db, prefix))) return keysPage(app, request, reply, notice('error', 'No working key has that prefix.'), 404);
    return reply.code(303).header('location', `/console/keys?revoked=${encodeURIComponent(prefix)}`).send();
  });
}
