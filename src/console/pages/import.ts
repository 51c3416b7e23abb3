import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sha256 } from '../../domain/passwords.js';
import { CHOOSABLE, suggestField, targetLabel, type Kind } from '../../import/columns.js';
import { UPLOAD_MAX_BYTES } from '../../import/limits.js';
import { FileProblem } from '../../import/problem.js';
import { isPrivateColumn, nameHints } from '../../import/reading.js';
import { columnsOf, rowLine, type HintWords, type RowIssue } from '../../import/planner.js';
import { readTableRows, readTableRowsInTurns } from '../../import/rows.js';
import { firstValues } from '../../import/table-shape.js';
import { PREVIEW_ROWS, feedPreviewOf, type FeedPreviewAnswer } from '../../feeds/preview.js';
import { countsLine } from '../../import/summary.js';
import { encodingNamed } from '../../import/text.js';
import { html, type Html } from '../../web/html.js';
import { actorOf, consoleCookies } from '../guard.js';
import { heldBytes, type HeldImport } from '../held-imports.js';
import { previewImport, runHintWords, startApply, type Preview } from '../../apply/index.js';
import { csrfField, heading, notice, render, table } from '../layout.js';
import { IMPORT_JS } from './import-script.js';
import { feedPreview, saveFeedForm } from './feeds.js';
import { READ_BUSY_RETRY_S, readUpload, type Refusal } from '../read-upload.js';

/**
 * Import (docs/console.md, Import): upload a CSV or .xlsx → the encoding choice when it is not UTF-8, the sheet
 * choice when a workbook has several → column
 * mapping with suggestions → a preview like `push --dry-run` → Apply with a progress bar → the
 * summary `push` prints. The upload is held in memory between the steps (held-imports.ts); nothing is
 * written before Apply. Editors and owners only.
 */

type Form = Record<string, string | undefined>;
const EDITOR = { config: { role: 'editor' as const } };
/** Rows listed per section of the preview and the summary; the counts cover all. */
const LISTED_ROWS = 200;
const KIND_LABEL: Record<Kind, string> = { artworks: 'Artworks', events: 'Events' };

export async function importPage(app: FastifyInstance): Promise<void> {
  const held = app.heldImports;
  const { session: sessionCookie } = consoleCookies(app.config.publicBaseUrl);
  const sessionOf = (request: FastifyRequest) => sha256(request.cookies[sessionCookie] ?? '');
  const gone = () => Object.assign(new Error('This import is no longer held (uploads are kept for 30 minutes). Upload the file again.'), { statusCode: 404 });
  /** The caller's upload once any read of it under way has ended (read-upload.ts): a double click waits for the first. */
  const find = async (request: FastifyRequest<{ Params: { id: string } }>): Promise<HeldImport> => {
    let upload = held.get(request.params.id, request.user.userId, sessionOf(request));
    if (upload?.reading) {
      await upload.reading.catch(() => undefined);
      // The read may have let it go.
      upload = held.get(request.params.id, request.user.userId, sessionOf(request));
    }
    if (!upload) throw gone();
    return upload;
  };
  const go = (reply: FastifyReply, path: string) => reply.code(303).header('location', path).send();

  app.get('/assets/import.js', { config: { role: 'anyone' }, schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(IMPORT_JS));

  app.get('/import', EDITOR, async (request, reply) => uploadPage(request, reply));

  app.post('/import', EDITOR, async (request, reply) => {
    let file;
    try {
      file = await request.file();
    } catch (error) {
      return uploadPage(request, reply, uploadRefusal(error), 413);
    }
    if (!file || file.filename === '') return uploadPage(request, reply, 'Choose a file to upload.', 400);
    const kindField = file.fields.kind;
    const kindValue = kindField && !Array.isArray(kindField) && 'value' in kindField ? String(kindField.value) : '';
    let bytes: Buffer;
    try {
      bytes = await file.toBuffer();
    } catch (error) {
      return uploadPage(request, reply, uploadRefusal(error), 413);
    }
    if (kindValue !== 'artworks' && kindValue !== 'events') return uploadPage(request, reply, 'Choose what the file holds: artworks or events.', 400);
    const upload = held.hold({
      userId: request.user.userId, entityId: request.user.entity.id, session: sessionOf(request), name: file.filename, kind: kindValue, bytes,
      encoding: 'utf8', map: new Map(), mirror: { prune: false, force: false },
    });
    if (!upload) return uploadPage(request, reply, 'Too many imports are being applied right now (at most two per gallery at once). Try again when one has finished.', 503);
    const problem = await readUpload(held, upload, { offerEncoding: true });
    if (problem) return refused(request, reply, problem);
    return go(reply, `/console/import/${upload.id}`);
  });

  app.get<{ Params: { id: string } }>('/import/:id', EDITOR, async (request, reply) => {
    const upload = await find(request);
    if (upload.job) return go(reply, `/console/import/${upload.id}/progress`);
    if (upload.notUtf8) return encodingPage(request, reply, upload);
    if (upload.sheets) return sheetPage(request, reply, upload);
    // No table and no choice: its read failed without a file-wide problem (that request answered 500).
    if (!upload.table) {
      held.release(upload);
      throw gone();
    }
    return columnsPage(request, reply, upload);
  });

  app.post<{ Params: { id: string }; Body: Form }>('/import/:id/encoding', EDITOR, async (request, reply) => {
    const upload = await find(request);
    const encoding = encodingNamed(request.body?.encoding ?? '');
    if (!encoding || !upload.notUtf8) return go(reply, `/console/import/${upload.id}`);
    upload.encoding = encoding;
    delete upload.notUtf8;
    const problem = await readUpload(held, upload, { offerEncoding: false });
    if (problem) return refused(request, reply, problem);
    return go(reply, `/console/import/${upload.id}`);
  });

  app.post<{ Params: { id: string }; Body: Form }>('/import/:id/sheet', EDITOR, async (request, reply) => {
    const upload = await find(request);
    const sheets = upload.sheets;
    const sheet = request.body?.sheet;
    if (!sheets) return go(reply, `/console/import/${upload.id}`);
    if (sheet === undefined || !sheets.includes(sheet)) return sheetPage(request, reply, upload, 'Choose one of the sheets below.');
    upload.sheet = sheet;
    const problem = await readUpload(held, upload, { offerEncoding: false });
    if (problem?.busy) return refused(request, reply, problem);
    if (problem) {
      // The workbook stays held with its sheets: another may be the one.
      delete upload.sheet;
      return sheetPage(request, reply, upload, problem.problem);
    }
    return go(reply, `/console/import/${upload.id}`);
  });

  app.post<{ Params: { id: string }; Body: Form }>('/import/:id/columns', EDITOR, async (request, reply) => {
    const upload = await find(request);
    if (!upload.table || upload.job) return go(reply, `/console/import/${upload.id}`);
    const body = request.body ?? {};
    upload.map = new Map(upload.table.columns.map((column, i) => {
      const field = body[`column_${i}`] ?? '';
      return [column.trim().toLowerCase(), CHOOSABLE[upload.kind].includes(field) ? field : null];
    }));
    upload.mirror = { prune: body.mirror === 'yes', force: body.force === 'yes' };
    let read;
    try {
      read = await readTableRowsInTurns(upload.table, upload.kind, { map: upload.map, defaultCurrency: request.user.entity.default_currency });
    } catch (error) {
      if (!(error instanceof FileProblem)) throw error;
      return columnsPage(request, reply, upload, `${error.message}${error.hint ? hintWords(error.hint) : ''}`);
    }
    upload.preview = await previewImport(app.db, actorOf(request), upload.kind, read.rows, columnsOf(read.reading), upload.mirror);
    // The preview is held until Apply: it counts against the held budget with its table (docs/console.md, Import).
    const holds = heldBytes(upload);
    const admitted = held.admitPreview(upload);
    if (admitted === 'too large') {
      return columnsPage(request, reply, upload, `This file is too large to preview in the console: its ${upload.table.rows.length.toLocaleString('en')} rows would hold about ${Math.ceil(holds / MB)} MB, more than the ${Math.floor(held.budgetBytes / MB)} MB the server holds for imports. Import it in parts, or with the push command.`);
    }
    if (admitted === 'busy') {
      reply.header('retry-after', String(READ_BUSY_RETRY_S));
      return columnsPage(request, reply, upload, `The server is holding other large imports right now. Try again in ${READ_BUSY_RETRY_S} seconds.`, 503);
    }
    return go(reply, `/console/import/${upload.id}/preview`);
  });

  app.get<{ Params: { id: string } }>('/import/:id/preview', EDITOR, async (request, reply) => {
    const upload = await find(request);
    if (!upload.preview) return go(reply, `/console/import/${upload.id}`);
    if (upload.job) return go(reply, `/console/import/${upload.id}/progress`);
    return previewPage(request, reply, upload, upload.preview, upload.feed && upload.table ? feedAnswer(request, upload, upload.preview) : undefined);
  });

  /** A feed's preview as the API's `POST /v1/feeds/preview` answers it, from the held file as the person mapped it. */
  function feedAnswer(request: FastifyRequest, upload: HeldImport, preview: Preview) {
    // Only the rows shown are read again: the counts and problems are the preview's, of the whole file.
    const shown = { ...upload.table!, rows: upload.table!.rows.slice(0, PREVIEW_ROWS) };
    const { rows, reading } = readTableRows(shown, upload.kind, { map: upload.map, defaultCurrency: request.user.entity.default_currency });
    return feedPreviewOf(preview, rows, reading, upload.mirror.prune ? 'mirror' : 'merge');
  }

  app.post<{ Params: { id: string } }>('/import/:id/apply', EDITOR, async (request, reply) => {
    const upload = await find(request);
    if (!upload.preview) return go(reply, `/console/import/${upload.id}`);
    // A feed's file is saved as a feed (pages/feeds.ts), never applied from here.
    if (upload.feed) return go(reply, `/console/import/${upload.id}/preview`);
    if (!upload.job) {
      upload.job = startApply(app.db, actorOf(request), upload.preview, upload.mirror);
      // What Apply needs is in the preview.
      delete upload.table;
    }
    return go(reply, `/console/import/${upload.id}/progress`);
  });

  app.get<{ Params: { id: string } }>('/import/:id/progress', EDITOR, async (request, reply) => {
    const upload = await find(request);
    if (!upload.job) return go(reply, `/console/import/${upload.id}`);
    return progressPage(request, reply, upload);
  });

  app.get<{ Params: { id: string } }>('/import/:id/progress.json', EDITOR, async (request, reply) => {
    const { job } = await find(request);
    if (!job) return reply.code(404).send({ error: 'not_found', message: 'Not applied yet.' });
    return reply.header('cache-control', 'no-store').send({ done: job.done, steps: job.steps, finished: job.finished, counts: countsLine(job.counts) });
  });
}

const uploadRefusal = (error: unknown): string => {
  const code = (error as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return `The file is larger than ${UPLOAD_MAX_BYTES / 1024 / 1024} MB, the most an upload may be. Split it into several files.`;
  if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return 'Upload one file at a time.';
  return 'The upload did not arrive whole. Try again.';
};

const steps = (current: number, feed = false): Html => html`<ol class="steps" aria-label="Steps">${(feed ? ['Connect', 'Columns', 'Preview', 'Save'] : ['Upload', 'Columns', 'Preview', 'Apply']).map((label, i) =>
  html`<li${i === current ? html` aria-current="step" class="current"` : ''}>${label}</li>`)}</ol>`;

const MB = 1024 * 1024;

/** A file not read: the upload page with why, 400, or 503 with Retry-After when the server was busy reading others. */
function refused(request: FastifyRequest, reply: FastifyReply, refusal: Refusal): FastifyReply {
  if (refusal.busy) reply.header('retry-after', String(READ_BUSY_RETRY_S));
  return uploadPage(request, reply, refusal.problem, refusal.busy ? 503 : 400);
}

function uploadPage(request: FastifyRequest, reply: FastifyReply, problem?: string, status = 200): FastifyReply {
  return render(request, reply, {
    title: 'Import', section: 'import', status,
    body: html`${heading('Import', 'Bring a spreadsheet of artworks or events into the catalog. You will see what changes before anything is written.')}
${steps(0)}
${problem ? notice('error', problem) : ''}
<form class="panel form" method="post" enctype="multipart/form-data" action="/console/import?_csrf=${encodeURIComponent(reply.generateCsrf())}">
<fieldset class="field"><legend>The file holds</legend>
<div class="checks"><label><input type="radio" name="kind" value="artworks" checked> Artworks</label>
<label><input type="radio" name="kind" value="events"> Events</label></div></fieldset>
<div class="field"><label for="import-file">File</label>
<input id="import-file" type="file" name="file" required accept=".csv,.tsv,.txt,.json,.xlsx,text/csv,application/json,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet">
<span class="hint">CSV (comma, semicolon or tab), JSON, or Excel .xlsx (when it has several sheets, you choose one next); at most ${UPLOAD_MAX_BYTES / 1024 / 1024} MB. The first row names the columns.</span></div>
<div><button type="submit">Upload</button></div>
</form>`,
  });
}

function encodingPage(request: FastifyRequest, reply: FastifyReply, upload: HeldImport): FastifyReply {
  const { line, byte } = upload.notUtf8!;
  const sample = sampleLine(upload.bytes!, line);
  return render(request, reply, {
    title: 'Import: encoding', section: upload.feed ? 'feeds' : 'import',
    body: html`${heading('Which encoding?', html`<b>${upload.name}</b> is not valid UTF-8: line ${line} has the byte 0x${byte.toString(16).toUpperCase()}.`)}
${steps(1, upload.feed !== undefined)}
<form class="panel form" method="post" action="/console/import/${upload.id}/encoding">${csrfField(reply)}
<p>Older spreadsheet programs save text as Windows-1252 (Latin-1). Line ${line} read that way:</p>
<p class="sample"><code>${new TextDecoder('windows-1252').decode(sample)}</code></p>
<fieldset class="field"><legend>Encoding</legend>
<div class="checks"><label><input type="radio" name="encoding" value="latin1" checked> Windows-1252 / Latin-1</label>
<label><input type="radio" name="encoding" value="utf8"> UTF-8</label></div></fieldset>
<div><button type="submit">Continue</button></div>
</form>`,
  });
}

function sheetPage(request: FastifyRequest, reply: FastifyReply, upload: HeldImport, problem?: string): FastifyReply {
  const sheets = upload.sheets!;
  return render(request, reply, {
    title: 'Import: sheet', section: 'import', status: problem ? 400 : 200,
    body: html`${heading('Which sheet?', html`<b>${upload.name}</b> has ${sheets.length.toLocaleString('en')} sheets. Choose the one that lists the ${upload.kind}; its first row names the columns.`)}
${steps(1)}
${problem ? notice('error', problem) : ''}
<form class="panel form" method="post" action="/console/import/${upload.id}/sheet">${csrfField(reply)}
<fieldset class="field"><legend>Sheet</legend>
<div class="checks">${sheets.map((name, i) => html`<label><input type="radio" name="sheet" value="${name}"${i === 0 ? html` checked` : ''}> ${name}</label>`)}</div></fieldset>
<div class="actions"><button type="submit">Continue</button> ${upload.feed
  ? html`<a class="button secondary" href="/console/feeds">Use another address</a>`
  : html`<a class="button secondary" href="/console/import">Upload another file</a>`}</div>
</form>`,
  });
}

/** The bytes of one line (1-based) of a file, at most 300. */
function sampleLine(bytes: Buffer, line: number): Buffer {
  let start = 0;
  for (let n = 1; n < line; n++) start = bytes.indexOf(0x0a, start) + 1;
  const end = bytes.indexOf(0x0a, start);
  return bytes.subarray(start, Math.min(end < 0 ? bytes.length : end, start + 300));
}

/** What a column's name says (docs/console.md, Import): a currency or unit its cells are read in, or that it is the gallery's private books. */
function columnNote(column: string, kind: Kind, chosen: string): Html | string {
  if (kind !== 'artworks') return '';
  if (chosen === '' && isPrivateColumn(column)) return html`<span class="hint column-note">Private: never filled by a suggestion</span>`;
  const { hints } = nameHints(column, kind);
  const said = [hints.currency ? `prices in ${hints.currency}` : '', hints.unit ? `measures in ${hints.unit === 'in' ? 'inches' : hints.unit}` : ''].filter(Boolean).join(', ');
  return said ? html`<span class="hint column-note">Read as ${said}</span>` : '';
}

function columnsPage(request: FastifyRequest, reply: FastifyReply, upload: HeldImport, problem?: string, status = 400): FastifyReply {
  const sheet = upload.table!;
  // Only what a person may write: never a read-only field (id, fingerprint, timestamps).
  const fields = CHOOSABLE[upload.kind];
  const chosen = (column: string) => (upload.map.has(column.trim().toLowerCase()) ? upload.map.get(column.trim().toLowerCase()) : suggestField(column, upload.kind)) ?? '';
  const firsts = firstValues(sheet);
  const example = (i: number) => {
    const value = firsts[i];
    return value === undefined ? '' : typeof value === 'string' ? value.slice(0, 60) : JSON.stringify(value).slice(0, 60);
  };
  const rows = sheet.columns.map((column, i) => {
    const current = chosen(column);
    const select = html`<label class="visually-hidden" for="column-${i}">Field for ${column}</label>
<select id="column-${i}" name="column_${i}"><option value=""${current === '' ? html` selected` : ''}>Leave out</option>${fields.map((field) =>
  html`<option value="${field}"${field === current ? html` selected` : ''}>${targetLabel(field)}</option>`)}</select>`;
    return [html`<span><b>${column}</b>${columnNote(column, upload.kind, current)}</span>`, example(i), select];
  });
  return render(request, reply, {
    title: 'Import: columns', section: upload.feed ? 'feeds' : 'import', status: problem ? status : 200,
    body: html`${heading('Match the columns', html`<b>${upload.name}</b>: ${sheet.rows.length.toLocaleString('en')} rows of ${KIND_LABEL[upload.kind].toLowerCase()}${upload.sheet === undefined ? '' : html` from the sheet <b>${upload.sheet}</b>`}${upload.encoding === 'latin1' ? ', read as Windows-1252' : ''}. Each column fills the field chosen beside it; suggestions are preselected.`)}
${steps(1, upload.feed !== undefined)}
${problem ? notice('error', problem) : ''}
<form class="form" method="post" action="/console/import/${upload.id}/columns">${csrfField(reply)}
${table(`Columns of ${upload.name}`, ['Column', 'First value', 'Field'], rows)}
<fieldset class="panel field"><legend>Mirror</legend>
<div class="checks"><label><input type="checkbox" name="mirror" value="yes"${upload.mirror.prune ? html` checked` : ''}> Delete the ${upload.kind} the file does not list</label></div>
<span class="hint">At most half of them, unless you confirm on the next page.</span>
${upload.mirror.force ? html`<input type="hidden" name="force" value="yes">` : ''}</fieldset>
<div class="actions"><button type="submit">Preview</button> ${upload.feed
  ? html`<a class="button secondary" href="/console/feeds">Use another address</a>`
  : html`<a class="button secondary" href="/console/import">Upload another file</a>`}</div>
</form>`,
  });
}

const planned = (caption: string, rows: { label: string; title: string; id?: number; fields?: string[] }[], kind: Kind): Html => {
  const shown = rows.slice(0, LISTED_ROWS).map((r) => [r.label, r.id ? html`<a href="/console/${kind}/${r.id}">${r.title}</a>` : r.title, r.fields?.join(', ') ?? null]);
  return html`${table(caption, ['Row', 'Title', 'Fields that change'], shown)}${rows.length > LISTED_ROWS ? html`<p class="hint">and ${(rows.length - LISTED_ROWS).toLocaleString('en')} more</p>` : ''}`;
};

/** The hints as this page words them: a column is matched to its field in the list above, not with a flag. */
const hintWords: HintWords = (hint) => {
  if (hint.kind === 'map-column') return hint.field === 'title' ? ': choose Title for one of them' : ': choose the field of each column';
  return runHintWords(hint);
};

const problems = (caption: string, rows: RowIssue[]): Html =>
  html`${table(caption, ['Row', 'Reason'], rows.slice(0, LISTED_ROWS).map((r) => rowLine(r, hintWords)).map((r) => [r.label, r.message]))}${rows.length > LISTED_ROWS ? html`<p class="hint">and ${(rows.length - LISTED_ROWS).toLocaleString('en')} more</p>` : ''}`;

function previewPage(request: FastifyRequest, reply: FastifyReply, upload: HeldImport, preview: Preview, feed?: FeedPreviewAnswer): FastifyReply {
  const { kind } = preview;
  const counts = {
    total: preview.total, created: preview.creates.length, updated: preview.updates.length, unchanged: preview.unchanged,
    duplicate: preview.duplicates.length, failed: preview.refused.length, deleted: preview.pruneBlocked ? 0 : preview.deletions.length,
  };
  const overLimit = upload.mirror.prune && preview.pruneBlocked?.includes('more than half');
  const section = (title: string, count: number, body: Html) => (count > 0 ? html`<h2>${title} (${count.toLocaleString('en')})</h2>${body}` : '');
  return render(request, reply, {
    title: 'Import: preview', section: upload.feed ? 'feeds' : 'import',
    body: html`${heading('Preview', html`Nothing has been written yet. <b>${upload.name}</b>`)}
${steps(2, upload.feed !== undefined)}
<p class="panel summary" id="import-summary">${countsLine(counts, { dryRun: true, deletions: upload.mirror.prune })}</p>
${upload.mirror.prune && preview.pruneBlocked ? notice('error', `Not mirrored: ${preview.pruneBlocked}.`) : ''}
${feed ? feedPreview(feed, kind) : html`${section('Will be created', preview.creates.length, planned('Rows that create a record', preview.creates, kind))}
${section('Will be updated', preview.updates.length, planned('Rows that update a record', preview.updates, kind))}
${section('Refused', preview.refused.length, problems('Rows that are refused', preview.refused))}
${section('Duplicates', preview.duplicates.length, problems('Rows that repeat an earlier row', preview.duplicates))}
${section('Written with a warning', preview.warnings.length, problems('Rows written, but worth a look', preview.warnings))}`}
${upload.mirror.prune ? section(preview.pruneBlocked ? 'Would be deleted' : 'Will be deleted', preview.deletions.length,
    table('Records the file does not list', ['Record', 'Title'], preview.deletions.slice(0, LISTED_ROWS).map((d) => [`#${d.id}`, d.title]))) : ''}
${upload.feed ? saveFeedForm(reply, upload) : html`<form class="panel form" method="post" action="/console/import/${upload.id}/${overLimit ? 'columns' : 'apply'}">${csrfField(reply)}
${overLimit ? html`${[...upload.map].map(([, field], i) => html`<input type="hidden" name="column_${i}" value="${field ?? ''}">`)}
<input type="hidden" name="mirror" value="yes">
<div class="checks"><label><input type="checkbox" name="force" value="yes" required> Yes, delete ${preview.deletions.length.toLocaleString('en')} ${kind}, more than half</label></div>
<div class="actions"><button type="submit" class="danger">Confirm the deletions</button></div>`
    : html`<div class="actions"><button type="submit">Apply</button> <a class="button secondary" href="/console/import/${upload.id}">Change the columns</a></div>`}
</form>`}`,
  });
}

function progressPage(request: FastifyRequest, reply: FastifyReply, upload: HeldImport): FastifyReply {
  const job = upload.job!;
  const kind = upload.kind;
  if (!job.finished) {
    return render(request, reply, {
      title: 'Import: applying', section: 'import',
      body: html`${heading('Applying', html`<b>${upload.name}</b>`)}
${steps(3)}
<div class="panel" id="import-progress" data-status="/console/import/${upload.id}/progress.json">
<label for="import-bar">Written</label>
<progress id="import-bar" max="${Math.max(1, job.steps)}" value="${job.done}">${job.done} of ${job.steps}</progress>
<p id="import-counts" aria-live="polite">${job.done.toLocaleString('en')} of ${job.steps.toLocaleString('en')}: ${countsLine(job.counts)}</p>
</div>
<noscript><meta http-equiv="refresh" content="1"></noscript>
<script src="/console/assets/import.js" defer></script>`,
    });
  }
  const changed = job.counts.created + job.counts.updated + job.counts.deleted > 0;
  return render(request, reply, {
    title: 'Import: done', section: 'import',
    body: html`${heading(job.error ? 'Import stopped' : 'Import done', html`<b>${upload.name}</b>`)}
${steps(3)}
${job.error ? notice('error', `The import stopped: ${job.error}.`) : ''}
<p class="panel summary" id="import-summary">${countsLine(job.counts)}${changed ? '' : html`<br>Nothing changed in the catalog.`}</p>
${job.pruneSkipped ? notice('error', `Not mirrored: ${job.pruneSkipped}.`) : ''}
${job.failures.length > 0 ? html`<h2>Rows not written (${job.failures.length.toLocaleString('en')})</h2>${problems('Rows not written', job.failures)}` : ''}
${job.runId === undefined ? '' : html`<p>This import is <a href="/console/runs/${job.runId}">run ${job.runId}</a>: its page can undo it, all of it, within ${request.server.config.trashDays} days.</p>`}
<div class="actions"><a class="button" href="/console/${kind}">See the ${kind}</a> <a class="button secondary" href="/console/import">Import another file</a></div>`,
  });
}
