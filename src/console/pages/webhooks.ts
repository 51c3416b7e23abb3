import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebhookEndpointRow } from '../../db/types.js';
import { ApiError } from '../../domain/errors.js';
import { DEFAULT_ROLL_GRACE, ROLL_GRACE, type RollGrace } from '../../domain/keys.js';
import { MAX_ENDPOINTS, WEBHOOK_TYPES, listedEvents } from '../../domain/webhooks.js';
import {
  createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, listMessages, retryMessage, rollSecret, sendTestMessage, updateEndpoint,
} from '../../store/webhooks.js';
import { html, type Html } from '../../web/html.js';
import { parseId } from '../../domain/ids.js';
import { endpointUrlProblem } from '../../webhooks/present.js';
import { csrfField, heading, notice, render, table, when } from '../layout.js';

type Form = Record<string, string | string[] | undefined>;

const GRACE_LABELS: Record<RollGrace, string> = { '1h': 'in 1 hour', '24h': 'in 24 hours', '7d': 'in 7 days', now: 'now' };
const TYPES = WEBHOOK_TYPES.filter((type) => type !== 'webhook.test');
const MESSAGES_PER_PAGE = 20;

const list = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

function endpointStatus(row: WebhookEndpointRow): Html {
  return row.enabled === 1 ? html`<span class="badge badge-ready">enabled</span>`
    : html`<span class="badge badge-failed">disabled</span>${row.disabled_reason ? html` <span class="hint">${row.disabled_reason}</span>` : ''}`;
}

const eventsText = (row: WebhookEndpointRow): string => (row.events === '*' ? 'all events' : listedEvents(row.events).join(', '));

/** The secret shown once, on the page that follows the endpoint's creation or roll (docs/console.md, Webhooks). */
const shownOnce = (secret: string, what: string): Html => html`${notice('ok', what)}
<section class="panel" aria-labelledby="new-secret"><h2 id="new-secret">Signing secret</h2>
<p>Copy it now into your receiver's settings: it is shown this once. Your receiver verifies each message with it (docs: Webhooks).</p>
<p class="secret">${secret}</p></section>`;

function eventChoices(chosen: readonly string[]): Html {
  const all = chosen.includes('*');
  return html`<fieldset class="field"><legend>Events</legend><div class="checks">
<label><input type="checkbox" name="events" value="*"${all ? html` checked` : ''}> all events</label>
${TYPES.map((type) => html`<label><input type="checkbox" name="events" value="${type}"${!all && chosen.includes(type) ? html` checked` : ''}> ${type}</label>`)}
</div><span class="hint">Only the checked types are sent; "all events" includes types added later.</span></fieldset>`;
}

/** Validates the endpoint form: the fields, or the problem to show. */
function endpointForm(app: FastifyInstance, body: Form | undefined): { url: string; events: string[]; description: string } | string {
  const url = String(body?.url ?? '').trim();
  const description = String(body?.description ?? '').trim();
  const events = [...new Set(list(body?.events))];
  const problem = endpointUrlProblem(url, app.config.fetchAllowPrivate);
  if (problem) return `URL ${problem}.`;
  if (url.length > 2048) return 'The URL is too long.';
  if (description.length > 1000) return 'The description is at most 1,000 characters.';
  if (events.length === 0) return 'Choose at least one event type.';
  if (events.some((e) => e !== '*' && !(TYPES as readonly string[]).includes(e))) return 'Choose event types from the list.';
  return { url, events: events.includes('*') ? ['*'] : events, description };
}

async function webhooksPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, top: Html | string = '', status = 200, form?: Form) {
  const endpoints = await listEndpoints(app.db, request.user.entity.id);
  const rows = endpoints.map((row) => [
    html`<a href="/console/webhooks/${row.id}">${row.url}</a>`, row.description, eventsText(row), endpointStatus(row), when(row.created_at),
  ]);
  return render(request, reply, {
    title: 'Webhooks', section: 'webhooks', status,
    body: html`${heading('Webhooks', 'Every change pushed to your own systems as it happens, signed so they can tell it came from us.')}
${top}
${table('Webhook endpoints', ['URL', 'Description', 'Events', 'Status', 'Added'], rows, 'No endpoints yet.')}
${endpoints.length >= MAX_ENDPOINTS ? html`<p class="hint">You have ${MAX_ENDPOINTS} endpoints, the most an account may have.</p>` : html`<h2 id="add">Add an endpoint</h2>
<form method="post" action="/console/webhooks" class="stack panel">
${csrfField(reply)}
<div class="field"><label for="url">URL</label><input id="url" name="url" type="url" required maxlength="2048" placeholder="https://…" value="${String(form?.url ?? '')}"></div>
<div class="field"><label for="description">Description</label><input id="description" name="description" type="text" maxlength="1000" value="${String(form?.description ?? '')}"></div>
${eventChoices(form ? list(form.events) : ['*'])}
<div><button type="submit">Add endpoint</button></div>
</form>`}`,
  });
}

/** A message type (artwork.created) that wraps only after a dot in a narrow column, never inside a word. */
const dotted = (type: string): Html => html`<span class="dotted">${type.split('.').map((part, i) => (i === 0 ? part : html`.<wbr>${part}`))}</span>`;

async function endpointPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, id: number, top: Html | string = '', status = 200) {
  const ownerId = request.user.entity.id;
  const row = await getEndpoint(app.db, ownerId, id);
  const after = Number((request.query as Record<string, string | undefined>).after) || undefined;
  const page = await listMessages(app.db, ownerId, id, { after, limit: MESSAGES_PER_PAGE });
  const messages = page.messages.map((message) => [
    html`<code>${message.id}</code>`, dotted(message.type), html`<span class="badge badge-${message.status === 'delivered' ? 'ready' : message.status === 'failed' ? 'failed' : 'pending'}">${message.status}</span>`,
    when(message.created_at),
    message.attemptRows.length === 0 ? 'none yet' : html`<details><summary>${message.attemptRows.length} attempt${message.attemptRows.length === 1 ? '' : 's'}</summary><ul>${message.attemptRows.map((a) => html`<li>${when(a.at)}: ${a.status_code === null ? '' : `HTTP ${a.status_code}, `}${a.duration_ms} ms${a.error ? html` — ${a.error}` : ''}${a.response ? html`<br><code>${a.response.slice(0, 200)}</code>` : ''}</li>`)}</ul></details>`,
    html`<form method="post" action="/console/webhooks/${id}/messages/${message.id}/retry" class="inline-form">${csrfField(reply)}<button type="submit" class="secondary">Retry</button></form>`,
  ]);
  const base = `/console/webhooks/${id}`;
  return render(request, reply, {
    title: `Webhook ${row.url}`, section: 'webhooks', status,
    body: html`${heading('Webhook endpoint', html`<code>${row.url}</code> ${endpointStatus(row)}`, html`<a href="/console/webhooks">All endpoints</a>`)}
${top}
<div class="row-actions">
<form method="post" action="${base}/test" class="inline-form">${csrfField(reply)}<button type="submit">Send test</button></form>
<form method="post" action="${base}/enabled" class="inline-form">${csrfField(reply)}<input type="hidden" name="enabled" value="${row.enabled === 1 ? 'false' : 'true'}"><button type="submit" class="secondary">${row.enabled === 1 ? 'Disable' : 'Enable'}</button></form>
<form method="post" action="${base}/roll" class="row-actions">${csrfField(reply)}
<label for="expire_old_in">Old secret stops signing</label><select id="expire_old_in" name="expire_old_in">${Object.keys(ROLL_GRACE).map((g) => html`<option value="${g}"${g === DEFAULT_ROLL_GRACE ? html` selected` : ''}>${GRACE_LABELS[g as RollGrace]}</option>`)}</select>
<button type="submit" class="secondary">Roll secret</button></form>
</div>
<h2 id="messages">Messages</h2>
${table('Messages, newest first', ['Id', 'Type', 'Status', 'Created', 'Attempts', 'Actions'], messages, 'No messages yet. Send a test to see one.')}
${page.hasMore ? html`<p><a href="${base}?after=${page.nextAfter}#messages">Older messages</a></p>` : ''}
<h2 id="settings">Settings</h2>
<form method="post" action="${base}" class="stack panel">
${csrfField(reply)}
<div class="field"><label for="url">URL</label><input id="url" name="url" type="url" required maxlength="2048" value="${row.url}"></div>
<div class="field"><label for="description">Description</label><input id="description" name="description" type="text" maxlength="1000" value="${row.description}"></div>
${eventChoices(listedEvents(row.events))}
<div><button type="submit">Save</button></div>
</form>
<form method="post" action="${base}/delete" class="inline-form">${csrfField(reply)}<button type="submit" class="danger" data-confirm="Delete this endpoint? Its pending messages are not sent.">Delete endpoint</button></form>`,
  });
}

/** A path id, or undefined when it names no endpoint. */
const pathId = (params: { id: string }): number | undefined => parseId(params.id);

/** Webhooks (owner): endpoints, the secret shown once, roll, test, enable/disable, the message log and Retry (docs/console.md, Webhooks). */
export async function webhookPages(app: FastifyInstance): Promise<void> {
  const notFound = () => new ApiError('not_found', 'Webhook endpoint not found.');

  app.get('/webhooks', { config: { role: 'owner' } }, async (request, reply) => webhooksPage(app, request, reply));

  app.post<{ Body: Form }>('/webhooks', { config: { role: 'owner' } }, async (request, reply) => {
    const form = endpointForm(app, request.body);
    if (typeof form === 'string') return webhooksPage(app, request, reply, notice('error', form), 400, request.body);
    try {
      const row = await createEndpoint(app.db, request.user.entity.id, { ...form, enabled: true });
      return endpointPage(app, request, reply, row.id, shownOnce(row.secret, `Endpoint ${row.url} added.`));
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) return webhooksPage(app, request, reply, notice('error', error.message), 400, request.body);
      throw error;
    }
  });

  app.get<{ Params: { id: string } }>('/webhooks/:id', { config: { role: 'owner' } }, async (request, reply) => {
    const id = pathId(request.params);
    if (id === undefined) throw notFound();
    return endpointPage(app, request, reply, id);
  });

  app.post<{ Params: { id: string }; Body: Form }>('/webhooks/:id', { config: { role: 'owner' } }, async (request, reply) => {
    const id = pathId(request.params);
    if (id === undefined) throw notFound();
    const form = endpointForm(app, request.body);
    if (typeof form === 'string') return endpointPage(app, request, reply, id, notice('error', form), 400);
    await updateEndpoint(app.db, request.user.entity.id, id, form);
    return endpointPage(app, request, reply, id, notice('ok', 'Saved.'));
  });

  app.post<{ Params: { id: string }; Body: Form }>('/webhooks/:id/enabled', { config: { role: 'owner' } }, async (request, reply) => {
    const id = pathId(request.params);
    if (id === undefined) throw notFound();
    const enabled = request.body?.enabled === 'true';
    await updateEndpoint(app.db, request.user.entity.id, id, { enabled });
    return endpointPage(app, request, reply, id, notice('ok', enabled ? 'Enabled: new messages are sent again.' : 'Disabled: no messages are sent.'));
  });

  app.post<{ Params: { id: string }; Body: Form }>('/webhooks/:id/roll', { config: { role: 'owner' } }, async (request, reply) => {
    const id = pathId(request.params);
    if (id === undefined) throw notFound();
    const grace = String(request.body?.expire_old_in ?? DEFAULT_ROLL_GRACE) as RollGrace;
    if (!(grace in ROLL_GRACE)) return endpointPage(app, request, reply, id, notice('error', 'Choose when the old secret stops signing.'), 400);
    const row = await rollSecret(app.db, request.user.entity.id, id, ROLL_GRACE[grace]);
    return endpointPage(app, request, reply, id, shownOnce(row.secret, `Secret rolled: the old one keeps signing too, and stops ${GRACE_LABELS[grace]}.`));
  });

  app.post<{ Params: { id: string } }>('/webhooks/:id/test', { config: { role: 'owner' } }, async (request, reply) => {
    const id = pathId(request.params);
    if (id === undefined) throw notFound();
    const message = await sendTestMessage(app.db, request.user.entity.id, id);
    return endpointPage(app, request, reply, id, notice('ok', `Test message ${message.id} is on its way.`));
  });

  app.post<{ Params: { id: string; message: string } }>('/webhooks/:id/messages/:message/retry', { config: { role: 'owner' } }, async (request, reply) => {
    const id = pathId(request.params);
    if (id === undefined || !/^msg_[0-9a-f]{32}$/.test(request.params.message)) throw notFound();
    await retryMessage(app.db, request.user.entity.id, id, request.params.message);
    return endpointPage(app, request, reply, id, notice('ok', `Message ${request.params.message} will be sent again now.`));
  });

  app.post<{ Params: { id: string } }>('/webhooks/:id/delete', { config: { role: 'owner' } }, async (request, reply) => {
    const id = pathId(request.params);
    if (id === undefined) throw notFound();
    await deleteEndpoint(app.db, request.user.entity.id, id);
    return webhooksPage(app, request, reply, notice('ok', 'Endpoint deleted.'));
  });
}
