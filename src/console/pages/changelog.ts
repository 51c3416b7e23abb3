import type { FastifyInstance } from 'fastify';
import { CHANGE_ENTITY_TYPES, type ChangeEntityType } from '../../schemas/changelog.js';
import { recentChanges } from '../../store/console.js';
import { html } from '../../web/html.js';
import { changeList } from '../changes.js';
import { heading, render } from '../layout.js';
import { cursor } from '../paths.js';

const PAGE_SIZE = 50;

/** Every changelog entry, newest first, filtered by kind and record (docs/console.md, Changelog). */
export async function changelogPage(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: Record<string, string | undefined> }>('/changelog', { config: { role: 'viewer' } }, async (request, reply) => {
    const query = request.query;
    const kind = CHANGE_ENTITY_TYPES.includes(query.kind as ChangeEntityType) ? query.kind as ChangeEntityType : undefined;
    const record = kind ? cursor(query.record) || undefined : undefined;
    const before = cursor(query.before);
    const page = await recentChanges(app.db, request.user.entity.id, { entityType: kind, recordId: record, before, limit: PAGE_SIZE });
    const link = (extra: Record<string, string>) => {
      const params = new URLSearchParams({ ...(kind ? { kind } : {}), ...(record ? { record: String(record) } : {}), ...extra });
      const text = params.toString();
      return text ? `/console/changelog?${text}` : '/console/changelog';
    };
    return render(request, reply, {
      title: 'Changelog', section: 'changelog',
      body: html`${heading('Changelog', 'Every write to the catalog, newest first: through the API, an import or this console.')}
<form method="get" class="filters" role="search">
<div class="field"><label for="kind">Kind</label><select id="kind" name="kind"><option value="">All kinds</option>${CHANGE_ENTITY_TYPES.map((k) => html`<option value="${k}"${k === kind ? html` selected` : ''}>${k}</option>`)}</select></div>
<div class="field"><label for="record">Record id</label><input id="record" name="record" type="text" inputmode="numeric" value="${record ?? ''}" aria-describedby="record-hint"><span class="hint" id="record-hint">With a kind.</span></div>
<div><button type="submit" class="secondary">Filter</button></div>
</form>
${changeList(page.rows, 'No changes match.')}
<nav class="pager" aria-label="Pages"><span>${page.rows.length} shown</span><span class="actions">
${before ? html`<a class="button secondary" href="${link({})}">Newest</a>` : ''}
${page.nextBefore !== null ? html`<a class="button secondary" href="${link({ before: String(page.nextBefore) })}">Older</a>` : ''}</span></nav>`,
    });
  });
}
