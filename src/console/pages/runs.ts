import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { undoPlan } from '../../feeds/undo.js';
import { getEntityRun, listEntityRuns, runJson, RUNS_PAGE_MAX } from '../../store/feeds.js';
import { startUndo, undoRefusal } from '../../store/undo.js';
import { nowIso } from '../../clock.js';
import type { FeedRunType } from '../../schemas/feeds.js';
import { html, type Html } from '../../web/html.js';
import { sourceInWords, userEmails } from '../changes.js';
import { csrfField, heading, notice, render, table, when } from '../layout.js';
import { cursor, recordId } from '../paths.js';

const PAGE_SIZE = Math.min(50, RUNS_PAGE_MAX);

const KIND_WORDS: Record<FeedRunType['kind'], string> = { feed: 'Feed run', import: 'Import', undo: 'Undo' };
const STATUS_WORDS: Record<FeedRunType['status'], string> = {
  queued: 'waiting', running: 'under way', unchanged: 'file unchanged', applied: 'done', needs_attention: 'needs attention', failed: 'failed',
};

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** A run's counts in the gallery's words; an undo's say what it took back. */
function countsInWords(run: FeedRunType): string {
  const c = run.counts;
  if (!c) return '';
  if (run.kind === 'undo') {
    return `${plural(c.deleted, 'record')} to the trash, ${plural(c.updated, 'record')} with fields back, ${plural(c.created, 'record')} restored, ${plural(c.unchanged, 'record')} left as they are`;
  }
  return `created ${c.created}, updated ${c.updated}, deleted ${c.deleted}, unchanged ${c.unchanged}, failed ${c.refused}`;
}

const what = (run: FeedRunType, emails: ReadonlyMap<number, string>): string =>
  (run.kind === 'undo' ? `undo of run ${run.source.slice('undo:'.length)}` : sourceInWords(run.source, emails));

function row(run: FeedRunType, emails: ReadonlyMap<number, string>): (Html | string | null)[] {
  return [
    html`<a href="/console/runs/${run.id}">Run ${run.id}</a>`,
    html`<span>${KIND_WORDS[run.kind]} <span class="none">${run.record_kind}</span></span>`,
    what(run, emails),
    html`<span>${STATUS_WORDS[run.status]}${run.undone_by === null ? '' : html`<span class="by">undone by <a href="/console/runs/${run.undone_by}">run ${run.undone_by}</a></span>`}</span>`,
    run.finished_at ? when(run.finished_at) : null,
    countsInWords(run) || null,
  ];
}

/** An undo's problems: the records and fields it left as they are. */
function problemsTable(run: FeedRunType): Html | '' {
  if (run.problems.length === 0) return '';
  const kind = run.record_kind;
  const singular = kind === 'artworks' ? 'artwork' : 'event';
  const rows = run.problems.map((p) => ('id' in p
    ? [html`<a href="/console/${kind}/${p.id}">${singular} #${p.id}</a>`, p.field ?? null, p.message]
    : [p.line === null ? null : `line ${p.line}`, p.column, p.message]));
  return table(run.kind === 'undo' ? 'Left as they are' : 'Problems', run.kind === 'undo' ? ['Record', 'Field', 'Why'] : ['Where', 'Column', 'Problem'], rows);
}

interface Outcome { status: number; message: Html | string }

async function runPage(app: FastifyInstance, request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, outcome?: Outcome) {
  const entityId = request.user.entity.id;
  const stored = await getEntityRun(app.db, entityId, recordId(request.params.id));
  const run = runJson(stored);
  const refusal = undoRefusal(stored, Date.now(), app.config.trashDays);
  // The plan is counted from the run's entries, not its stored counts: those count no fields, and know
  // nothing of what an undo given up part-way did already.
  const [emails, plan] = await Promise.all([userEmails(app.db, entityId), refusal ? undefined : undoPlan(app.db, entityId, run.id)]);
  const title = `Run ${run.id}: ${KIND_WORDS[run.kind].toLowerCase()}`;
  const underWay = run.status === 'queued' || run.status === 'running';
  return render(request, reply, {
    title, section: 'runs', status: outcome?.status ?? 200,
    body: html`<div class="trash">${heading(title, html`${what(run, emails)}, ${STATUS_WORDS[run.status]}${run.finished_at ? html`, ended ${when(run.finished_at)}` : ''}.`)}
${outcome ? notice(outcome.status < 400 ? 'ok' : 'error', outcome.message) : ''}
${underWay && run.kind === 'undo' ? notice('ok', html`The undo is under way, record by record. <a href="/console/runs/${run.id}">Reload</a> to see what it did.`) : ''}
<div class="panel stack">
<dl class="fields">
<dt>What it did</dt><dd>${countsInWords(run) || html`<span class="none">nothing counted yet</span>`}</dd>
${run.undone_by === null ? '' : html`<dt>Undone by</dt><dd><a href="/console/runs/${run.undone_by}">run ${run.undone_by}</a></dd>`}
${run.error ? html`<dt>Error</dt><dd>${run.error}</dd>` : ''}
</dl>
${problemsTable(run)}
</div>
${plan ? html`<section class="panel stack undo-plan" aria-labelledby="undo-title">
<h2 id="undo-title">Undo this run?</h2>
<p>Undoing puts the catalog back as it was before this run, record by record:</p>
<ul>
<li><strong>${plural(plan.toTrash, 'record')}</strong> it created go to the <a href="/console/trash">Trash</a> (for ${app.config.trashDays} days), even if edited since.</li>
<li><strong>${plural(plan.fieldsBack, 'field')}</strong> of ${plural(plan.recordsBack, 'record')} it changed get their old values back — except a field changed since the run, which is kept and listed.</li>
<li><strong>${plural(plan.restores, 'record')}</strong> it deleted come back from the Trash, unless another record now has the same inventory number or title (then it is listed).</li>
</ul>
${run.feed_id === null ? '' : html`<p>The feed is paused until you resume it; its next run then reads the file again whole.</p>`}
<p>An undo is a run of its own, in the changelog; it cannot itself be undone.</p>
<form method="post" action="/console/runs/${run.id}/undo" class="row-actions">${csrfField(reply)}
<button type="submit" class="danger">Undo run ${run.id}</button>
<a class="button secondary" href="/console/runs">Keep it</a>
</form>
</section>` : ''}</div>`,
  });
}

/** Runs (docs/console.md, Runs): every import, feed run and undo; a run's page shows what an Undo will do, then does it. */
export async function runPages(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: Record<string, string | undefined> }>('/runs', { config: { role: 'editor' } }, async (request, reply) => {
    const entityId = request.user.entity.id;
    const after = cursor(request.query.after) || undefined;
    const [page, emails] = await Promise.all([listEntityRuns(app.db, entityId, ['artworks', 'events'], after, PAGE_SIZE), userEmails(app.db, entityId)]);
    const runs = page.runs.map(runJson);
    return render(request, reply, {
      title: 'Runs', section: 'runs',
      body: html`<div class="trash">${heading('Runs', `Every import, feed run and undo, newest first. Open a run to see what it did, and to undo it within ${app.config.trashDays} days.`)}
${table('Runs', ['Run', 'Kind', 'By', 'Status', 'Ended', 'What it did'], runs.map((run) => row(run, emails)), 'No imports or feed runs yet.')}
<nav class="pager" aria-label="Pages"><span>${runs.length} shown</span><span class="actions">
${after ? html`<a class="button secondary" href="/console/runs">First page</a>` : ''}
${page.nextAfter !== null ? html`<a class="button secondary" href="/console/runs?after=${page.nextAfter}">Next page</a>` : ''}</span></nav></div>`,
    });
  });

  app.get<{ Params: { id: string } }>('/runs/:id', { config: { role: 'editor' } }, async (request, reply) => runPage(app, request, reply));

  app.post<{ Params: { id: string } }>('/runs/:id/undo', { config: { role: 'editor' } }, async (request, reply) => {
    const id = recordId(request.params.id);
    try {
      const undo = await startUndo(app.db, request.user.entity.id, id, app.config.trashDays, nowIso());
      return await reply.code(303).header('location', `/console/runs/${undo.id}`).send();
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'conflict') throw error;
      return runPage(app, request, reply, { status: 409, message: error.message });
    }
  });
}
