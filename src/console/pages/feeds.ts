import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { nowIso } from '../../clock.js';
import { ApiError } from '../../domain/errors.js';
import { sha256 } from '../../domain/passwords.js';
import { FetchFailed } from '../../feeds/fetcher.js';
import { feedJson } from '../../feeds/present.js';
import type { FeedPreviewAnswer } from '../../feeds/preview.js';
import { targetLabel, type Kind } from '../../import/columns.js';
import { SHEET_NAME_MAX, type FeedRunType, type FeedType } from '../../schemas/feeds.js';
import { createFeed, deleteFeed, feedUrlProblem, getFeed, listFeeds, queueRun, updateFeed, type FeedSpec } from '../../store/feeds.js';
import { html, type Html } from '../../web/html.js';
import { consoleCookies } from '../guard.js';
import type { HeldImport } from '../held-imports.js';
import { csrfField, heading, notice, render, table, when } from '../layout.js';
import { readUpload } from '../read-upload.js';
import { recordId } from '../paths.js';
import { confirmDeletes } from '../../feeds/confirm.js';

/**
 * Feeds (docs/console.md, Feeds): connect a URL → its file is read once → the Import's column mapping
 * and preview (pages/import.ts, on the same held file) → mode and interval → Save. Each feed shows its
 * last run, next run, Run now, Pause/Resume, Edit mapping and Delete. Editors and owners only.
 */

type Form = Record<string, string | undefined>;
const EDITOR = { config: { role: 'editor' as const } };
const INTERVALS: [number, string][] = [[15, 'every 15 minutes'], [30, 'every 30 minutes'], [60, 'every hour'], [180, 'every 3 hours'], [360, 'every 6 hours'], [720, 'every 12 hours'], [1440, 'once a day']];
const KIND_LABEL: Record<Kind, string> = { artworks: 'Artworks', events: 'Events' };
const BUSY_RETRY_S = 30;
const BUSY = `Two files of this gallery are being read or imported right now (at most two at once). Try again in ${BUSY_RETRY_S} seconds.`;

/** What a redirect back to the list says: a fixed sentence per code, so no text of a request is reflected. */
const NOTICES: Record<string, [kind: 'ok' | 'error', text: string]> = {
  saved: ['ok', 'The feed is saved; its first run is queued.'],
  remapped: ['ok', 'The mapping is saved; the next run applies the file with it.'],
  queued: ['ok', 'A run is queued.'],
  paused: ['ok', 'The feed is paused.'],
  resumed: ['ok', 'The feed is resumed.'],
  deleted: ['ok', 'The feed is deleted; the records it wrote stay.'],
  confirmed: ['ok', 'The listed records are in the Trash; the last run says what was deleted and what was left.'],
};

export async function feedPages(app: FastifyInstance): Promise<void> {
  const { session: sessionCookie } = consoleCookies(app.config.publicBaseUrl);
  const sessionOf = (request: FastifyRequest) => sha256(request.cookies[sessionCookie] ?? '');
  const go = (reply: FastifyReply, path: string) => reply.code(303).header('location', path).send();
  const entityOf = (request: FastifyRequest) => request.user.entity.id;

  app.get<{ Querystring: { done?: string } }>('/feeds', EDITOR, async (request, reply) => {
    const shown = NOTICES[request.query.done ?? ''];
    return feedsPage(request, reply, shown ? notice(shown[0], shown[1]) : undefined);
  });

  async function feedsPage(request: FastifyRequest, reply: FastifyReply, message?: Html, status = 200, form: Form = {}) {
    const feeds = (await listFeeds(app.db, entityOf(request))).map((found) => feedJson(found));
    return render(request, reply, {
      title: 'Feeds', section: 'feeds', status,
      body: html`${heading('Feeds', 'Keep the catalog in sync with a spreadsheet or export your gallery already publishes at a URL: it is read on a schedule and applied like an import.')}
${message ?? ''}
${feeds.length === 0 ? html`<p class="empty">No feeds yet.</p>` : feeds.map((feed) => feedPanel(reply, feed))}
${connectForm(reply, form, feeds.length)}
${howTo()}`,
    });
  }

  /**
   * Reads the file at `url` once and holds it for the Import's steps; the page to go on with, or a problem.
   * The file takes one of the gallery's two import slots before its fetch starts (up to 20 MB, 60 s), so a
   * third Connect or Edit mapping at once is refused as busy rather than fetched (docs/console.md, Feeds).
   */
  async function hold(request: FastifyRequest, draft: { url: string; kind: Kind; feedId: number | null; sheet: string | null; encoding?: 'utf8' | 'latin1'; map?: Map<string, string | null>; mirror?: boolean }): Promise<string | { problem: string; busy?: true }> {
    const upload = app.heldImports.hold({
      userId: request.user.userId, entityId: request.user.entity.id, session: sessionOf(request), name: draft.url, kind: draft.kind, bytes: null,
      encoding: draft.encoding ?? 'utf8', map: new Map(), mirror: { prune: draft.mirror ?? false, force: false },
      feed: { url: draft.url, feedId: draft.feedId, sheet: draft.sheet }, fetching: true,
    });
    if (!upload) return { problem: BUSY, busy: true };
    try {
      const fetched = await app.feedFetch(draft.url, { etag: null, lastModified: null });
      if (fetched.notModified) throw new FetchFailed('the server answered 304 to a plain request');
      upload.bytes = fetched.bytes;
    } catch (error) {
      app.heldImports.release(upload);
      if (!(error instanceof FetchFailed)) throw error;
      return { problem: `The file could not be read: ${error.message}.` };
    } finally {
      upload.fetching = false;
    }
    const problem = await readUpload(app.heldImports, upload, { offerEncoding: draft.encoding === undefined });
    if (problem) return problem;
    if (draft.map) upload.map = draft.map;
    return `/console/import/${upload.id}`;
  }

  /** A file that could not be held: 400 with why, or, when the gallery's two slots are taken, 429 with Retry-After. */
  function refused(request: FastifyRequest, reply: FastifyReply, why: { problem: string; busy?: true }, form: Form = {}) {
    if (why.busy) reply.header('retry-after', String(BUSY_RETRY_S));
    return feedsPage(request, reply, notice('error', why.problem), why.busy ? 429 : 400, form);
  }

  app.post<{ Body: Form }>('/feeds/connect', EDITOR, async (request, reply) => {
    const form = request.body ?? {};
    const url = (form.url ?? '').trim();
    const kind = form.kind === 'events' ? 'events' : form.kind === 'artworks' ? 'artworks' : undefined;
    if (!kind) return feedsPage(request, reply, notice('error', 'Choose what the file holds: artworks or events.'), 400, form);
    if (!isHttpUrl(url)) return feedsPage(request, reply, notice('error', 'Give the address of the file, starting with https:// or http://.'), 400, form);
    if (feedUrlProblem(url)) return feedsPage(request, reply, notice('error', 'The address must not hold a user name or password: publish the file at a link that needs neither.'), 400, { ...form, url: '' });
    // An Excel workbook's sheet, by name (the first when none is given), as the API's `sheet`.
    const sheet = (form.sheet ?? '').trim();
    if (sheet.length > SHEET_NAME_MAX) return feedsPage(request, reply, notice('error', `A sheet's name is at most ${SHEET_NAME_MAX} characters.`), 400, form);
    const next = await hold(request, { url, kind, feedId: null, sheet: sheet === '' ? null : sheet });
    if (typeof next !== 'string') return refused(request, reply, next, form);
    return go(reply, next);
  });

  app.post<{ Params: { id: string }; Body: Form }>('/feeds/save/:id', EDITOR, async (request, reply) => {
    const upload = app.heldImports.get(request.params.id, request.user.userId, sessionOf(request));
    if (!upload?.feed || !upload.table) return feedsPage(request, reply, notice('error', 'This file is no longer held (it is kept for 30 minutes). Connect the URL again.'), 404);
    const form = request.body ?? {};
    const interval = Number(form.interval_minutes);
    const spec: FeedSpec = {
      url: upload.feed.url, kind: upload.kind, mapping: mappingOf(upload), encoding: upload.encoding === 'latin1' ? 'windows-1252' : 'utf-8',
      sheet: upload.feed.sheet, mode: form.mode === 'mirror' ? 'mirror' : 'merge',
      interval_minutes: INTERVALS.some(([minutes]) => minutes === interval) ? interval : 60, paused: false,
    };
    try {
      if (upload.feed.feedId === null) {
        await createFeed(app.db, entityOf(request), spec, nowIso());
      } else {
        const { url: _url, kind: _kind, paused: _paused, ...patch } = spec;
        await updateFeed(app.db, entityOf(request), upload.feed.feedId, patch, nowIso());
      }
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500 || error.status === 404) throw error;
      return feedsPage(request, reply, notice('error', error.message), error.status);
    }
    return go(reply, `/console/feeds?done=${upload.feed.feedId === null ? 'saved' : 'remapped'}`);
  });

  app.post<{ Params: { id: string }; Body: Form }>('/feeds/:id/run', EDITOR, async (request, reply) => {
    const id = recordId(request.params.id);
    try {
      await queueRun(app.db, entityOf(request), id, nowIso());
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'rate_limited') throw error;
      return feedsPage(request, reply, notice('error', error.message), 429);
    }
    return go(reply, '/console/feeds?done=queued');
  });

  // "Delete these N": the records the run listed go to the trash (docs/console.md, Feeds).
  app.post<{ Params: { id: string; run: string } }>('/feeds/:id/runs/:run/confirm-deletes', EDITOR, async (request, reply) => {
    try {
      await confirmDeletes(app.db, entityOf(request), recordId(request.params.id), recordId(request.params.run));
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'conflict') throw error;
      return feedsPage(request, reply, notice('error', error.message), 409);
    }
    return go(reply, '/console/feeds?done=confirmed');
  });

  app.post<{ Params: { id: string } }>('/feeds/:id/pause', EDITOR, async (request, reply) => {
    const id = recordId(request.params.id);
    const { feed } = await getFeed(app.db, entityOf(request), id);
    await updateFeed(app.db, entityOf(request), id, { paused: feed.paused === 0 }, nowIso());
    return go(reply, `/console/feeds?done=${feed.paused === 0 ? 'paused' : 'resumed'}`);
  });

  app.post<{ Params: { id: string } }>('/feeds/:id/mapping', EDITOR, async (request, reply) => {
    const id = recordId(request.params.id);
    const feed = feedJson(await getFeed(app.db, entityOf(request), id));
    const map = new Map(Object.entries(feed.mapping).map(([column, field]) => [column.trim().toLowerCase(), field]));
    const next = await hold(request, {
      url: feed.url, kind: feed.kind, feedId: id, sheet: feed.sheet, encoding: feed.encoding === 'windows-1252' ? 'latin1' : 'utf8', map, mirror: feed.mode === 'mirror',
    });
    if (typeof next !== 'string') return refused(request, reply, next);
    return go(reply, next);
  });

  app.post<{ Params: { id: string } }>('/feeds/:id/delete', EDITOR, async (request, reply) => {
    await deleteFeed(app.db, entityOf(request), recordId(request.params.id));
    return go(reply, '/console/feeds?done=deleted');
  });
}

const isHttpUrl = (text: string): boolean => {
  if (text.length > 2048) return false;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
};

/** Every column of the file as the person mapped it (a column left out is `null`), so that columns added later are ignored and named. */
function mappingOf(upload: HeldImport): Record<string, string | null> {
  return Object.fromEntries(upload.table!.columns.map((column) => {
    const key = column.trim().toLowerCase();
    const field = upload.map.has(key) ? upload.map.get(key)! : null;
    return [column, field];
  }));
}

/** The last step of a feed's preview (pages/import.ts): mode and interval, then Save. */
export function saveFeedForm(reply: FastifyReply, upload: HeldImport): Html {
  const mirror = upload.mirror.prune;
  return html`<form class="panel form" method="post" action="/console/feeds/save/${upload.id}">${csrfField(reply)}
<fieldset class="field"><legend>Mode</legend>
<div class="checks"><label><input type="radio" name="mode" value="merge"${mirror ? '' : html` checked`}> Merge: create and update records</label>
<label><input type="radio" name="mode" value="mirror"${mirror ? html` checked` : ''}> Mirror: also delete the ${upload.kind} the file no longer lists</label></div>
<span class="hint">When a run would delete more than 10 of them, or more than a tenth, within a day, it lists them and waits for you.</span></fieldset>
<div class="field"><label for="feed-interval">Read the file</label>
<select id="feed-interval" name="interval_minutes">${INTERVALS.map(([minutes, label]) => html`<option value="${minutes}"${minutes === 60 ? html` selected` : ''}>${label}</option>`)}</select></div>
<div class="actions"><button type="submit">Save</button> <a class="button secondary" href="/console/import/${upload.id}">Change the columns</a></div>
</form>`;
}

const ACTION_LABEL: Record<FeedPreviewAnswer['rows'][number]['action'], string> = { create: 'Create', update: 'Update', unchanged: 'Unchanged', refused: 'Refused' };
const AVAILABILITY_LABEL: Record<string, string> = { available: 'Available', sold: 'Sold', reserved: 'Reserved', not_for_sale: 'Not for sale' };
const PRICE_DISPLAY_LABEL: Record<string, string> = { on_request: 'Price on request', hidden: 'Price hidden' };

/** One value of a previewed row as the gallery writes it. */
const shownValue = (value: unknown): string =>
  Array.isArray(value) ? value.map(shownValue).join(', ') : value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value);

/**
 * A previewed row's fields in the gallery's words (docs/console.md, Feeds): "Price: EUR 12,500", "Price on request",
 * "Availability: Not for sale" — never a field's code or a price_display value.
 */
export function previewFields(fields: Record<string, unknown>): Html {
  const parts: Html[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (value === null || value === undefined || value === '') continue;
    if (field === 'currency' && typeof fields.price === 'number') continue;
    if (field === 'price' && typeof value === 'number') {
      const currency = typeof fields.currency === 'string' ? fields.currency : null;
      parts.push(html`<span class="value"><b>Price:</b> ${currency ? `${currency} ${value.toLocaleString('en')}` : `${value.toLocaleString('en')} (no currency)`}</span>`);
    } else if (field === 'price_display') {
      const label = PRICE_DISPLAY_LABEL[shownValue(value)];
      if (label) parts.push(html`<span class="value"><b>${label}</b></span>`);
    } else if (field === 'availability') {
      parts.push(html`<span class="value"><b>Availability:</b> ${AVAILABILITY_LABEL[shownValue(value)] ?? shownValue(value)}</span>`);
    } else {
      parts.push(html`<span class="value"><b>${targetLabel(field)}:</b> ${shownValue(value)}</span>`);
    }
  }
  return html`<span class="fields">${parts.map((part, i) => html`${i > 0 ? ' · ' : ''}${part}`)}</span>`;
}

/**
 * A feed's preview as `POST /v1/feeds/preview` answers it (feeds/preview.ts, the one preview function):
 * the columns in use and left out, the first rows as they would be written, and the problems with their level.
 */
export function feedPreview(answer: FeedPreviewAnswer, kind: Kind): Html {
  const c = answer.counts;
  const used = Object.entries(answer.mapping).filter(([, field]) => field !== null);
  const rows = answer.rows.map((row) => [
    row.line, ACTION_LABEL[row.action],
    row.id === null ? null : html`<a href="/console/${kind}/${row.id}">#${row.id}</a>`,
    previewFields(row.fields),
  ]);
  return html`<section class="panel feed-preview" aria-labelledby="feed-preview-title">
<h2 id="feed-preview-title">What the first run would write</h2>
<p id="feed-preview-counts">${c.rows.toLocaleString('en')} rows: ${c.created} to create, ${c.updated} to update, ${c.unchanged} unchanged, ${c.refused} refused, ${c.duplicates} duplicates${c.deleted > 0 ? `, ${c.deleted} to delete` : ''}.</p>
<h3>Columns read</h3>
${table('Columns and the fields they fill', ['Column', 'Field'], used.map(([column, field]) => [column, targetLabel(field!)]), 'No column is read.')}
${answer.unmapped_columns.length > 0 ? html`<p class="hint">Left out: ${answer.unmapped_columns.join(', ')}.</p>` : ''}
<h3>The first ${answer.rows.length} rows</h3>
${table('The first rows as they would be written', ['Line', 'Action', 'Record', 'Fields'], rows, 'The file holds no rows.')}
${answer.problems.length > 0 ? html`<h3>Problems (${answer.problems.length})</h3>
${table('Problems of the preview', ['Line', 'Column', 'Problem', 'Level'], answer.problems.map((p) => [p.line, p.column, p.message, p.level === 'error' ? html`<b>refused</b>` : 'warning, written']))}` : ''}
</section>`;
}

const STATUS_LABEL: Record<FeedRunType['status'], string> = {
  queued: 'queued', running: 'running', unchanged: 'unchanged', applied: 'applied', needs_attention: 'needs attention', failed: 'failed',
};

function runSummary(run: FeedRunType | null): Html {
  if (!run) return html`<span class="none">no run yet</span>`;
  const counts = run.counts
    ? html`: ${run.counts.rows.toLocaleString('en')} rows, created ${run.counts.created}, updated ${run.counts.updated}, unchanged ${run.counts.unchanged}, deleted ${run.counts.deleted}, refused ${run.counts.refused}, duplicates ${run.counts.duplicates}`
    : '';
  // The run's own page says what it did and offers its Undo (docs/console.md, Runs).
  const undone = run.undone_by === null ? '' : html` (undone by <a href="/console/runs/${run.undone_by}">run ${run.undone_by}</a>)`;
  return html`<b>${STATUS_LABEL[run.status]}</b> ${when(run.finished_at ?? run.started_at)}${counts} — <a href="/console/runs/${run.id}">run ${run.id}</a>${undone}`;
}

function feedPanel(reply: FastifyReply, feed: FeedType): Html {
  const run = feed.last_run;
  const button = (action: string, label: string, cls = '') =>
    html`<form method="post" action="/console/feeds/${feed.id}/${action}" class="inline">${csrfField(reply)}<button type="submit"${cls ? html` class="${cls}"` : ''}>${label}</button></form>`;
  const problems = run && run.problems.length > 0
    ? table(`Problems of the last run of feed ${feed.id}`, ['Line', 'Column', 'Problem'], run.problems.slice(0, 20).map((p) => ['line' in p ? p.line : null, 'line' in p ? p.column : null, p.message]))
    : '';
  return html`<section class="panel feed" id="feed-${feed.id}" aria-labelledby="feed-${feed.id}-title">
<h2 id="feed-${feed.id}-title">${KIND_LABEL[feed.kind]} from <span class="url">${feed.url}</span></h2>
<dl class="facts">
<div><dt>Mode</dt><dd>${feed.mode === 'mirror' ? 'mirror (deletes what the file no longer lists)' : 'merge'}, ${INTERVALS.find(([m]) => m === feed.interval_minutes)?.[1] ?? `every ${feed.interval_minutes} minutes`}</dd></div>
<div><dt>Last run</dt><dd>${runSummary(run)}</dd></div>
<div><dt>Next run</dt><dd>${feed.paused ? html`<b>paused</b>${feed.paused_reason ? html`: ${feed.paused_reason}` : ''}` : when(feed.next_run_at)}</dd></div>
</dl>
${run?.error ? notice('error', run.error) : ''}
${feed.unmapped_columns && feed.unmapped_columns.length > 0 ? html`<p class="hint">Columns left out: ${feed.unmapped_columns.join(', ')} (your private columns are never read by a guess). Edit the mapping to use one.</p>` : ''}
${run && run.new_columns.length > 0 ? html`<p class="hint">Columns not applied: ${run.new_columns.join(', ')}. Edit the mapping to use them.</p>` : ''}
${problems}
${run?.pending_deletes && run.pending_deletes.length > 0 ? pendingDeletes(reply, feed, run, run.pending_deletes) : ''}
<div class="actions">${button('run', 'Run now')}
${button('pause', feed.paused ? 'Resume' : 'Pause', 'secondary')}
${button('mapping', 'Edit mapping', 'secondary')}
${button('delete', 'Delete', 'danger')}</div>
</section>`;
}

/** A run's mass delete, waiting for a person: what it would delete, then "Delete these N". */
function pendingDeletes(reply: FastifyReply, feed: FeedType, run: FeedRunType, pending: NonNullable<FeedRunType['pending_deletes']>): Html {
  const n = pending.length.toLocaleString('en');
  const what = feed.kind === 'artworks' ? (pending.length === 1 ? 'artwork' : 'artworks') : (pending.length === 1 ? 'event' : 'events');
  return html`<div class="pending-deletes">
<p>The file no longer lists these ${n} ${what}. Nothing was deleted: check the list, then delete them (they go to the Trash for ${reply.server.config.trashDays} days), or fix the file and run again.</p>
${table(`What the last run of feed ${feed.id} would delete`, ['Title', 'Inventory number'], pending.map((p) => [p.title, p.external_id ?? null]))}
<form method="post" action="/console/feeds/${feed.id}/runs/${run.id}/confirm-deletes" class="inline">${csrfField(reply)}<button type="submit" class="danger">Delete these ${n}</button></form>
</div>`;
}

function connectForm(reply: FastifyReply, form: Form, count: number): Html {
  if (count >= 10) return html`<p class="hint">An account has at most 10 feeds: delete one to connect another.</p>`;
  return html`<form class="panel form feeds-connect" method="post" action="/console/feeds/connect">${csrfField(reply)}
<h2>Connect a file</h2>
<div class="field"><label for="feed-url">Address of the file</label>
<input id="feed-url" name="url" type="url" required maxlength="2048" placeholder="https://" value="${form.url ?? ''}">
<span class="hint">CSV, JSON or Excel .xlsx; at most 20 MB. It is read once now, so that you can match its columns.</span></div>
<fieldset class="field"><legend>The file holds</legend>
<div class="checks"><label><input type="radio" name="kind" value="artworks"${form.kind === 'events' ? '' : html` checked`}> Artworks</label>
<label><input type="radio" name="kind" value="events"${form.kind === 'events' ? html` checked` : ''}> Events</label></div></fieldset>
<div class="field"><label for="feed-sheet">Sheet (Excel only)</label>
<input id="feed-sheet" name="sheet" type="text" maxlength="${SHEET_NAME_MAX}" value="${form.sheet ?? ''}">
<span class="hint">The name of the sheet that lists them, if it is not the workbook's first.</span></div>
<div><button type="submit">Connect</button></div>
</form>`;
}

function howTo(): Html {
  return html`<section class="panel feeds-how" aria-labelledby="feeds-how">
<h2 id="feeds-how">Where to get such an address</h2>
<ul>
<li><b>Google Sheets</b>: File → Share → Publish to web; choose the sheet and “Comma-separated values (.csv)”, Publish, and copy the link.</li>
<li><b>Excel on OneDrive or SharePoint</b>: Share → “Anyone with the link can view” → Copy link; add <code>download=1</code> to the link (after <code>?</code> or <code>&amp;</code>) so that it gives the file itself.</li>
<li><b>Numbers, LibreOffice or Excel on your computer</b>: export CSV into a shared Dropbox folder and use its link with <code>dl=1</code> at the end instead of <code>dl=0</code>.</li>
<li><b>Your website or inventory system</b>: its CSV or JSON export address, if it has one.</li>
</ul>
<p class="hint">Whoever has the address can read the file: publish only what may be public.</p>
</section>`;
}
