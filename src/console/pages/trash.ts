import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, notFound } from '../../domain/errors.js';
import { getArtwork, restoreArtwork } from '../../store/artworks.js';
import { getEvent, restoreEvent } from '../../store/events.js';
import { TRASH_KINDS, deleteFromTrash, getTrashItem, listTrash, trashCursor, type TrashItem, type TrashKind } from '../../store/trash.js';
import { html, type Html } from '../../web/html.js';
import { sourceInWords, userEmails } from '../changes.js';
import { actorOf } from '../guard.js';
import { csrfField, heading, notice, render, table, when } from '../layout.js';
import { recordId } from '../paths.js';

const PAGE_SIZE = 50;

type Query = Record<string, string | undefined>;
type Params = { kind: string; id: string };

/** What the page says of each kind, and the store's restore of it (the API's: docs/api.md, Trash). */
const KINDS: Record<TrashKind, { singular: string; identity: string; restore: (app: FastifyInstance, request: FastifyRequest, id: number) => Promise<unknown> }> = {
  artworks: {
    singular: 'artwork', identity: 'the same inventory number (or, without one, the same title, artist and year)',
    restore: (app, request, id) => restoreArtwork(app.db, actorOf(request), id),
  },
  events: {
    singular: 'event', identity: 'the same title (and so the same address)',
    restore: (app, request, id) => restoreEvent(app.db, actorOf(request), id),
  },
};

const capital = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

const kindOf = (raw: string | undefined): TrashKind | undefined => TRASH_KINDS.find((k) => k === raw);

/** A kind from a path: anything else names nothing in the trash (404, as an unknown record). */
function pathKind(raw: string): TrashKind {
  const kind = kindOf(raw);
  if (!kind) throw notFound('Record in the trash');
  return kind;
}

/** The `restored` and `removed` notices name a record as `artworks-12`. */
const RECORD_REF = /^(artworks|events)-(\d{1,10})$/;

/** The notice after a restore: the record by its title, with a link to its page (it may have gone again since). */
async function restoredNotice(app: FastifyInstance, entityId: number, ref: string | undefined): Promise<Html | ''> {
  const match = ref === undefined ? null : RECORD_REF.exec(ref);
  if (!match) return '';
  const kind = match[1] as TrashKind;
  const id = Number(match[2]);
  const { singular } = KINDS[kind];
  const title = await (kind === 'artworks' ? getArtwork(app.db, entityId, id) : getEvent(app.db, entityId, id))
    .then((record) => String(record.title), (error: unknown) => {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    });
  if (title === undefined) return notice('ok', `${capital(singular)} #${id} was restored.`);
  return notice('ok', html`“${title}” is back in the catalog, with the same number and every field: <a href="/console/${kind}/${id}">open ${singular} #${id}</a>.`);
}

function removedNotice(ref: string | undefined): Html | '' {
  const match = ref === undefined ? null : RECORD_REF.exec(ref);
  if (!match) return '';
  const { singular } = KINDS[match[1] as TrashKind];
  return notice('ok', `${capital(singular)} #${match[2]!} was deleted for good.`);
}

/** Who deleted each record, in the gallery's words: the console's users by their email. */
function row(reply: FastifyReply, item: TrashItem, emails: ReadonlyMap<number, string>): (Html | string | null)[] {
  const { singular } = KINDS[item.kind];
  const base = `/console/trash/${item.kind}/${item.id}`;
  // One element a cell: on a phone each cell is a grid of its label and its value.
  return [
    html`<span class="badge">${singular}</span>`, html`<span>${item.title} <span class="none">#${item.id}</span></span>`,
    item.kind === 'artworks' ? item.artist_name ?? null : null,
    html`<span>${when(item.deleted_at)}<span class="by">by ${sourceInWords(item.deleted_by, emails)}</span></span>`, when(item.purge_at),
    html`<div class="row-actions">
<form method="post" action="${base}/restore" class="inline-form">${csrfField(reply)}<button type="submit">Restore<span class="visually-hidden"> ${singular} #${item.id}, ${item.title}</span></button></form>
<a class="button danger" href="${base}/delete">Delete forever…<span class="visually-hidden"> ${singular} #${item.id}, ${item.title}</span></a>
</div>`,
  ];
}

/** The page's link with the kind filter kept. */
const link = (kind: TrashKind | undefined, extra: Record<string, string> = {}): string => {
  const text = new URLSearchParams({ ...(kind ? { kind } : {}), ...extra }).toString();
  return text ? `/console/trash?${text}` : '/console/trash';
};

interface Outcome { status: number; message: Html }

async function trashPage(app: FastifyInstance, request: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply, outcome?: Outcome) {
  const query = request.query;
  const entityId = request.user.entity.id;
  const kind = kindOf(query.kind);
  // A cursor this service did not give out is the first page, as the console's other lists do.
  const after = query.after === undefined ? undefined : trashCursor(query.after);
  const [page, emails] = await Promise.all([
    listTrash(app.db, entityId, kind ? [kind] : TRASH_KINDS, PAGE_SIZE, after, app.config.trashDays),
    userEmails(app.db, entityId),
  ]);
  const days = app.config.trashDays;
  return render(request, reply, {
    title: 'Trash', section: 'trash', status: outcome?.status ?? 200,
    body: html`<div class="trash">${heading('Trash', `Deleted works and events wait here for ${days} days, newest first, then they are removed for good. Restore brings one back with the same number and every field.`)}
${outcome ? notice('error', outcome.message) : ''}
${await restoredNotice(app, entityId, query.restored)}
${removedNotice(query.removed)}
<form method="get" class="filters filters-one" role="search">
<div class="field"><label for="kind">Kind</label><select id="kind" name="kind"><option value="">All kinds</option>${TRASH_KINDS.map((k) => html`<option value="${k}"${k === kind ? html` selected` : ''}>${k}</option>`)}</select></div>
<div><button type="submit" class="secondary">Filter</button></div>
</form>
${table('Deleted records', ['Kind', 'Title', 'Artist', 'Deleted', 'Removed for good', 'Actions'], page.items.map((item) => row(reply, item, emails)),
    kind ? `No deleted ${kind} in the trash.` : 'The trash is empty.')}
<nav class="pager" aria-label="Pages"><span>${page.items.length} shown${after ? ' (after the first page)' : ''}</span><span class="actions">
${after ? html`<a class="button secondary" href="${link(kind)}">First page</a>` : ''}
${page.nextAfter !== null ? html`<a class="button secondary" href="${link(kind, { after: page.nextAfter })}">Next page</a>` : ''}</span></nav></div>`,
  });
}

/** The Trash (docs/console.md, Trash): deleted artworks and events, Restore, Delete forever. */
export async function trashPages(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: Query }>('/trash', { config: { role: 'editor' } }, async (request, reply) => trashPage(app, request, reply));

  app.post<{ Params: Params; Querystring: Query }>('/trash/:kind/:id/restore', { config: { role: 'editor' } }, async (request, reply) => {
    const kind = pathKind(request.params.kind);
    const id = recordId(request.params.id);
    const { singular, identity, restore } = KINDS[kind];
    try {
      await restore(app, request, id);
    } catch (error) {
      // A live record holds its identity now (the API's 409 duplicate): say which, restore nothing.
      if (!(error instanceof ApiError) || error.code !== 'duplicate') throw error;
      const holder = error.extras.existing_id;
      const item = await getTrashItem(app.db, request.user.entity.id, kind, id, app.config.trashDays);
      const name = item ? `“${item.title}” (${singular} #${id})` : `${capital(singular)} #${id}`;
      const message = holder === undefined
        ? html`${name} was not restored: a ${singular} in the catalog now has ${identity}. Change or delete that one, then restore this one.`
        : html`${name} was not restored: <a href="/console/${kind}/${holder}">${singular} #${holder}</a> in the catalog now has ${identity}. Change or delete that one, then restore this one.`;
      return trashPage(app, request, reply, { status: 409, message });
    }
    return reply.code(303).header('location', `/console/trash?restored=${kind}-${id}`).send();
  });

  app.get<{ Params: Params }>('/trash/:kind/:id/delete', { config: { role: 'editor' } }, async (request, reply) => {
    const kind = pathKind(request.params.kind);
    const id = recordId(request.params.id);
    const item = await getTrashItem(app.db, request.user.entity.id, kind, id, app.config.trashDays);
    if (!item) throw notFound('Record in the trash');
    const { singular } = KINDS[kind];
    const emails = await userEmails(app.db, request.user.entity.id);
    return render(request, reply, {
      title: `Delete “${item.title}” forever?`, section: 'trash',
      body: html`${heading(`Delete “${item.title}” forever?`, `${capital(singular)} #${id}, in the Trash.`)}
<div class="panel stack">
<dl class="fields">
<dt>Title</dt><dd>${item.title}</dd>
${kind === 'artworks' ? html`<dt>Artist</dt><dd>${item.artist_name ?? html`<span class="none">—</span>`}</dd>` : ''}
<dt>Deleted</dt><dd>${when(item.deleted_at)} by ${sourceInWords(item.deleted_by, emails)}</dd>
<dt>Removed for good</dt><dd>${when(item.purge_at)}, unless restored before</dd>
</dl>
<p><strong>This cannot be undone.</strong> Deleting it forever removes it now, with its picture (unless another record uses it): it can no longer be restored. The changelog keeps what was written to it.</p>
<form method="post" action="/console/trash/${kind}/${id}/delete" class="row-actions">${csrfField(reply)}
<button type="submit" class="danger">Delete forever</button>
<a class="button secondary" href="/console/trash">Keep it in the Trash</a>
</form>
</div>`,
    });
  });

  app.post<{ Params: Params }>('/trash/:kind/:id/delete', { config: { role: 'editor' } }, async (request, reply) => {
    const kind = pathKind(request.params.kind);
    const id = recordId(request.params.id);
    await deleteFromTrash(app.db, request.user.entity.id, kind, id);
    return reply.code(303).header('location', `/console/trash?removed=${kind}-${id}`).send();
  });
}
