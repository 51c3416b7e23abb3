import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { artworkFromPut, type StoredView } from '../../domain/artwork.js';
import { ApiError } from '../../domain/errors.js';
import { eventFromPut } from '../../domain/event.js';
import { ArtworkPut, AVAILABILITY, DIMENSION_UNITS, PRICE_DISPLAY } from '../../schemas/artworks.js';
import type { FieldProblem } from '../../schemas/common.js';
import { EVENT_TYPES, EventPut } from '../../schemas/events.js';
import { compileBodyValidator } from '../../schemas/validator.js';
import { deleteArtwork, getArtwork, updateArtwork } from '../../store/artworks.js';
import { presentRecord, type ImageView } from '../../store/present.js';
import { recentChanges } from '../../store/console.js';
import { deleteEvent, getEvent, updateEvent } from '../../store/events.js';
import { getTrashItem } from '../../store/trash.js';
import { html, type Html } from '../../web/html.js';
import { changeList } from '../changes.js';
import { actorOf, mayAct } from '../guard.js';
import { csrfField, heading, notice, render, when } from '../layout.js';
import { recordId } from '../paths.js';

type Values = Record<string, unknown>;

/** One editable field: how the form shows it and how its text becomes the PUT body's value. */
interface Field {
  name: string;
  label: string;
  input: 'text' | 'textarea' | 'integer' | 'number' | 'url' | 'date' | 'select' | 'views';
  options?: readonly string[];
  hint?: string;
}

/** What the record pages need to know of a kind (artworks, events). */
interface Kind {
  section: 'artworks' | 'events';
  changeType: 'artwork' | 'event';
  singular: string;
  fields: readonly Field[];
  /** Read-only fields shown with the record. */
  facts: readonly string[];
  get(app: FastifyInstance, entityId: number, id: number): Promise<Values>;
  /** The PUT path: the same schema, rules and store function as the API (docs/console.md, Roles). */
  validate(body: Values): FieldProblem[];
  update(app: FastifyInstance, request: FastifyRequest, id: number, body: Values): Promise<unknown>;
  remove(app: FastifyInstance, request: FastifyRequest, id: number): Promise<void>;
  publicHref(slug: string, record: Values): string;
}

const VIEWS_HINT = 'One view a line: URL | role (detail, installation, verso, frame, other) | caption | text alternative. Leave parts empty between the bars.';

const ARTWORKS: Kind = {
  section: 'artworks', changeType: 'artwork', singular: 'Artwork',
  fields: [
    { name: 'title', label: 'Title', input: 'text' },
    { name: 'artist_name', label: 'Artist', input: 'text' },
    { name: 'creation_year', label: 'Year', input: 'integer' },
    { name: 'medium', label: 'Medium', input: 'text' },
    { name: 'dimensions', label: 'Dimensions', input: 'text', hint: 'As written (200 x 160 cm); height, width and depth are read from it when left empty.' },
    { name: 'height', label: 'Height', input: 'number' },
    { name: 'width', label: 'Width', input: 'number' },
    { name: 'depth', label: 'Depth', input: 'number' },
    { name: 'dimension_unit', label: 'Unit', input: 'select', options: DIMENSION_UNITS },
    { name: 'edition_size', label: 'Edition size', input: 'integer' },
    { name: 'edition_number', label: 'Edition number', input: 'integer' },
    { name: 'artist_proofs', label: 'Artist\'s proofs', input: 'integer' },
    { name: 'price', label: 'Price', input: 'integer', hint: 'A whole number, without separators or currency sign (12500).' },
    { name: 'currency', label: 'Currency', input: 'text', hint: 'ISO 4217 code, e.g. EUR.' },
    { name: 'price_display', label: 'Display on public pages', input: 'select', options: PRICE_DISPLAY, hint: 'shown, on_request ("Price on request") or hidden, on public pages.' },
    { name: 'availability', label: 'Availability', input: 'select', options: AVAILABILITY },
    { name: 'external_id', label: 'Inventory number', input: 'text' },
    { name: 'image_url', label: 'Image URL', input: 'url' },
    { name: 'image_alt', label: 'Image text alternative', input: 'text', hint: 'What the image shows, for people who cannot see it (at most 500 characters).' },
    { name: 'additional_images', label: 'More views', input: 'views', hint: VIEWS_HINT },
    { name: 'external_url', label: 'Web page', input: 'url' },
    { name: 'description', label: 'Description', input: 'textarea' },
  ],
  facts: ['source_fingerprint', 'last_synced_at', 'created_at', 'updated_at'],
  get: async (app, entityId, id) => await getArtwork(app.db, entityId, id),
  validate: compileBodyValidator(ArtworkPut, 'body'),
  update: (app, request, id, body) => updateArtwork(app.db, actorOf(request), id, artworkFromPut(body)),
  remove: (app, request, id) => deleteArtwork(app.db, actorOf(request), id),
  publicHref: (slug, record) => `/profiles/${encodeURIComponent(slug)}/artworks/${String(record.id)}`,
};

const EVENTS: Kind = {
  section: 'events', changeType: 'event', singular: 'Event',
  fields: [
    { name: 'title', label: 'Title', input: 'text' },
    { name: 'event_type', label: 'Type', input: 'select', options: EVENT_TYPES },
    { name: 'start_date', label: 'Starts', input: 'date' },
    { name: 'end_date', label: 'Ends', input: 'date' },
    { name: 'location_city', label: 'City', input: 'text' },
    { name: 'location_country', label: 'Country', input: 'text', hint: 'ISO 3166-1 alpha-2 code, e.g. DE.' },
    { name: 'image_url', label: 'Image URL', input: 'url' },
    { name: 'external_url', label: 'Web page', input: 'url' },
    { name: 'ical_url', label: 'Calendar URL', input: 'url' },
    { name: 'description', label: 'Description', input: 'textarea' },
  ],
  facts: ['slug', 'last_synced_at', 'created_at', 'updated_at'],
  get: async (app, entityId, id) => await getEvent(app.db, entityId, id),
  validate: compileBodyValidator(EventPut, 'body'),
  update: (app, request, id, body) => updateEvent(app.db, actorOf(request), id, eventFromPut(body)),
  remove: (app, request, id) => deleteEvent(app.db, actorOf(request), id),
  publicHref: (slug, record) => `/profiles/${encodeURIComponent(slug)}/events/${encodeURIComponent(String(record.slug))}`,
};

/** A stored value as form text (records hold text, numbers, null, and the views' list). */
const shown = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : Array.isArray(v) ? viewLines(v as StoredView[]) : '');


/** The views as the form's lines (docs/console.md, Editing an artwork's art data). */
const viewLines = (views: readonly StoredView[]): string =>
  views.map((v) => [v.url, v.role ?? '', v.caption ?? '', v.alt ?? ''].join(' | ').replace(/( \| )+$/, '')).join('\n');

/** The form's lines as the PUT body's views: URL, then role, caption and alternative; the alternative keeps any further bar. */
function parseViewLines(text: string): Values[] {
  return text.split('\n').map((line) => line.trim()).filter((line) => line !== '').map((line) => {
    const [url = '', role = '', caption = '', ...alt] = line.split('|').map((part) => part.trim());
    const altText = alt.join(' | ');
    return { url, role: role === '' ? null : role, caption: caption === '' ? null : caption, alt: altText === '' ? null : altText };
  });
}

/**
 * The PUT body a submitted form asks for: only the fields whose text differs from the record's; an
 * emptied field is `null` (clears it; an emptied title is refused, as by PUT); a whole number where the
 * field takes one. Text that is not a number stays text, so the validator names the field.
 */
function putBody(kind: Kind, record: Values, form: Record<string, unknown>): Values {
  const body: Values = {};
  for (const field of kind.fields) {
    const raw = form[field.name];
    if (typeof raw !== 'string') continue;
    const text = field.input === 'textarea' || field.input === 'views' ? raw.replace(/\r\n/g, '\n') : raw;
    if (text.trim() === shown(record[field.name]).trim()) continue;
    body[field.name] = text === '' && field.name !== 'title' ? null
      : field.input === 'views' ? parseViewLines(text)
        : field.input === 'integer' && /^-?\d{1,16}$/.test(text.trim()) ? Number(text.trim())
          : field.input === 'number' && /^\d{1,9}(?:[.,]\d+)?$/.test(text.trim()) ? Number(text.trim().replace(',', '.')) : text;
  }
  return body;
}

function input(field: Field, value: string, problem: string | undefined, disabled: boolean): Html {
  const id = `f-${field.name}`;
  const described = [field.hint ? `${id}-hint` : '', problem ? `${id}-problem` : ''].filter(Boolean).join(' ');
  const attrs = html`id="${id}" name="${field.name}"${described ? html` aria-describedby="${described}"` : ''}${problem ? html` aria-invalid="true"` : ''}${disabled ? html` disabled` : ''}`;
  const control = field.input === 'textarea' || field.input === 'views' ? html`<textarea ${attrs}>${value}</textarea>`
    : field.input === 'select' ? html`<select ${attrs}><option value="">—</option>${(field.options ?? []).map((o) => html`<option value="${o}"${o === value ? html` selected` : ''}>${o}</option>`)}</select>`
      // Dates and numbers are text inputs: the form shows what was typed, and the API's rules judge it.
      : html`<input ${attrs} type="${field.input === 'url' ? 'url' : 'text'}"${field.input === 'integer' ? html` inputmode="numeric"` : field.input === 'number' ? html` inputmode="decimal"` : ''}${field.input === 'date' ? html` placeholder="YYYY-MM-DD"` : ''} value="${value}">`;
  return html`<div class="field"><label for="${id}">${field.label}</label>${control}${field.hint ? html`<span class="hint" id="${id}-hint">${field.hint}</span>` : ''}${problem ? html`<span class="problem" id="${id}-problem">${problem}</span>` : ''}</div>`;
}

interface Outcome {
  status: number;
  problems?: FieldProblem[];
  message?: Html | string;
  /** The form's text as sent, shown again after a refusal. */
  form?: Record<string, unknown>;
}

async function recordPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, kind: Kind, id: number, outcome?: Outcome) {
  const user = request.user;
  const record = await kind.get(app, user.entity.id, id);
  const history = await recentChanges(app.db, user.entity.id, { entityType: kind.changeType, recordId: id, before: 0, limit: 20 });
  const editor = mayAct(user, 'editor');
  // A view's problem (`additional_images/0/role`) is shown at the views' field.
  const problems = new Map((outcome?.problems ?? []).map((p) => [p.field.split(/[/.[]/)[0]!, p.message]));
  const saved = (request.query as Record<string, string | undefined>).saved !== undefined;
  // The platform's copy, never the gallery's own URL (docs/console.md, Artworks and events): opening a
  // record must not tell the gallery's image host who works in the console, or when.
  const { image } = await presentRecord(app.db, '', { image_url: (record.image_url as string | null | undefined) ?? null });
  const title = String(record.title);
  const fields = html`<dl class="fields">${kind.fields.map((f) => html`<dt>${f.label}</dt><dd>${shown(record[f.name]) || html`<span class="none">—</span>`}</dd>`)}
${kind.facts.filter((f) => f.endsWith('_at')).map((f) => html`<dt>${f.replace(/_/g, ' ')}</dt><dd>${when(record[f] as string)}</dd>`)}</dl>
<details class="more"><summary>Details</summary><dl class="fields">${kind.facts.filter((f) => !f.endsWith('_at')).map((f) => html`<dt>${f.replace(/_/g, ' ')}</dt><dd>${shown(record[f])}</dd>`)}</dl>
<p class="hint">How the service tells this record apart from others: you never need to write it.</p></details>`;
  const form = editor ? html`<h2 id="edit">Edit</h2>
<form method="post" action="/console/${kind.section}/${id}" class="stack panel" novalidate>
${csrfField(reply)}
${kind.fields.map((f) => input(f, outcome?.form ? shown(outcome.form[f.name]) : shown(record[f.name]), problems.get(f.name), false))}
<div><button type="submit">Save changes</button></div>
</form>
<h2>Delete</h2>
<form method="post" action="/console/${kind.section}/${id}/delete" class="panel">
${csrfField(reply)}
<p>Deleting removes the ${kind.singular.toLowerCase()} from the catalog and its public page, and moves it to the <a href="/console/trash">Trash</a> for ${app.config.trashDays} days: until then, Restore there brings it back with every field.</p>
<button type="submit" class="danger" data-confirm="Delete “${title}”? It goes to the Trash for ${app.config.trashDays} days.">Delete ${kind.singular.toLowerCase()}</button>
</form>` : '';
  return render(request, reply, {
    title, section: kind.section, status: outcome?.status ?? 200,
    body: html`${heading(title, html`${kind.singular} #${id} · <a href="${kind.publicHref(user.entity.slug, record)}">public page</a>`, html`<a class="button secondary" href="/console/${kind.section}">All ${kind.section}</a>`)}
${saved ? notice('ok', 'Saved.') : ''}
${outcome?.message ? notice('error', outcome.message) : ''}
<div class="record">
<section aria-labelledby="details" class="panel"><h2 id="details" class="visually-hidden">Details</h2>${fields}</section>
<section class="image panel" aria-label="Image">${imageFigure(image, title)}</section>
</div>
${form}
<h2>History</h2>
${changeList(history.rows, 'No changes recorded yet.')}
${history.nextBefore ? html`<p><a href="/console/changelog?kind=${kind.changeType}&amp;record=${id}">The whole history</a></p>` : ''}`,
  });
}

/** The platform's copy of the image when it is ready; else what the platform knows of it, in words. */
function imageFigure(image: ImageView | null, title: string): Html {
  if (!image) return html`<p class="none">No image.</p>`;
  if (image.status === 'ready' && image.src) {
    return html`<img src="${image.src}" alt="${title}" loading="lazy" width="480" height="${image.width && image.height ? Math.round((480 * image.height) / image.width) : 360}">`;
  }
  if (image.status === 'failed') return html`<p class="none">The image could not be used: ${image.error ?? 'unknown reason'}.</p>`;
  return html`<p class="none">The image is being fetched; it shows here once the platform has its copy.</p>`;
}

/** A deleted record's page: still 404, as in the API, saying it is in the Trash (docs/console.md, Trash); else the 404 as it came. */
async function trashedPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, kind: Kind, id: number, missing: ApiError) {
  const item = await getTrashItem(app.db, request.user.entity.id, kind.section, id, app.config.trashDays);
  if (!item) throw missing;
  const trash = mayAct(request.user, 'editor')
    ? html`<a href="/console/trash?kind=${kind.section}">Open the Trash</a> to restore it, with the same number and every field.`
    : 'An editor or an owner can restore it from the Trash.';
  return render(request, reply, {
    title: item.title, section: kind.section, status: 404,
    body: html`${heading(item.title, `${kind.singular} #${id}`)}
${notice('error', html`This ${kind.singular.toLowerCase()} was deleted ${when(item.deleted_at)} and is in the Trash until ${when(item.purge_at)}. ${trash}`)}`,
  });
}

/** Refusals of the store (400 with details, 409) shown on the form; anything else goes to the error page. */
function refusal(error: unknown, kind: Kind, form: Record<string, unknown>): Outcome {
  if (!(error instanceof ApiError) || (error.status !== 400 && error.status !== 409)) throw error;
  const existing = error.extras.existing_id;
  const message = existing !== undefined
    ? html`${error.message} <a href="/console/${kind.section}/${existing}">Open ${kind.singular.toLowerCase()} #${existing}</a>.`
    : error.message;
  return { status: error.status, problems: (error.extras.details) ?? [], message, form };
}

export function recordRoutes(kind: Kind) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get<{ Params: { id: string } }>(`/${kind.section}/:id`, { config: { role: 'viewer' } }, async (request, reply) => {
      const id = recordId(request.params.id);
      try {
        return await recordPage(app, request, reply, kind, id);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 404) throw error;
        return trashedPage(app, request, reply, kind, id, error);
      }
    });

    app.post<{ Params: { id: string }; Body: Record<string, unknown> }>(`/${kind.section}/:id`, { config: { role: 'editor' } }, async (request, reply) => {
      const id = recordId(request.params.id);
      const form = request.body ?? {};
      const record = await kind.get(app, request.user.entity.id, id);
      const body = putBody(kind, record, form);
      const problems = kind.validate(body);
      let outcome: Outcome | undefined;
      if (problems.length) outcome = { status: 400, problems, message: 'Some fields need another look.', form };
      else {
        try {
          await kind.update(app, request, id, body);
        } catch (error) {
          outcome = refusal(error, kind, form);
        }
      }
      if (outcome) return recordPage(app, request, reply, kind, id, outcome);
      return reply.code(303).header('location', `/console/${kind.section}/${id}?saved=1`).send();
    });

    app.post<{ Params: { id: string } }>(`/${kind.section}/:id/delete`, { config: { role: 'editor' } }, async (request, reply) => {
      const id = recordId(request.params.id);
      await kind.remove(app, request, id);
      return reply.code(303).header('location', `/console/${kind.section}?deleted=${id}`).send();
    });
  };
}

export const artworkRecordPages = recordRoutes(ARTWORKS);
export const eventRecordPages = recordRoutes(EVENTS);
