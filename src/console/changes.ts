import type { Db } from '../db/types.js';
import type { ChangelogEntryType } from '../schemas/changelog.js';
import { listUsers } from '../store/users.js';
import { html, type Html } from '../web/html.js';
import { when } from './layout.js';

/** A changed value as people read it: text as is, other values as JSON, an absent one as an em dash. */
const value = (v: unknown): Html | string => (v === null || v === undefined ? html`<span class="none">—</span>` : typeof v === 'string' ? v : JSON.stringify(v));

const recordHref = (entry: ChangelogEntryType): string | undefined =>
  entry.action === 'delete' ? undefined
    : entry.entity_type === 'artwork' ? `/console/artworks/${entry.entity_id}`
      : entry.entity_type === 'event' ? `/console/events/${entry.entity_id}` : undefined;

/** The gallery's users' emails by id, for `sourceInWords` to name who wrote ("console:<user id>"). */
export async function userEmails(db: Db, entityId: number): Promise<Map<number, string>> {
  return new Map((await listUsers(db, entityId)).map((user) => [user.id, user.email]));
}

/**
 * Who wrote it, in the gallery's words, from a changelog `source` (docs/api.md, Changelog): a console
 * user (their email when `emails` knows them), an API key by its prefix, a feed, an import, an undo.
 */
export function sourceInWords(text: string, emails: ReadonlyMap<number, string> = new Map()): string {
  const [kind = '', rest = ''] = text.split(/:(.*)/s);
  if (kind === 'console' && /^\d+$/.test(rest)) return emails.get(Number(rest)) ?? `console user #${rest}`;
  if (kind === 'api') return `API key ${rest}…`;
  if (kind === 'feed') return `feed ${rest}`;
  if (kind === 'undo') return `undo of run ${rest}`;
  if (kind === 'import') return 'import';
  return text;
}

/** Changelog entries, newest first, each with its field changes old → new. */
export function changeList(entries: readonly ChangelogEntryType[], empty = 'No changes yet.'): Html {
  if (entries.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<ol class="changes">${entries.map((entry) => {
    const href = recordHref(entry);
    const label = `${entry.entity_type} #${entry.entity_id}`;
    const fields = Object.entries(entry.field_changes).filter(([field]) => field !== 'last_synced_at' && field !== 'source_fingerprint');
    return html`<li class="change">
<div class="change-head"><strong>${entry.action} ${href ? html`<a href="${href}">${label}</a>` : label}</strong><span>${when(entry.created_at)}</span><span>by ${sourceInWords(entry.source)}</span><span>#${entry.id}</span></div>
${fields.length ? html`<dl class="diff">${fields.map(([field, change]) => html`<dt>${field}</dt><dd>${entry.action === 'create' ? '' : html`<del>${value(change.old)}</del> → `}<ins>${value(change.new)}</ins></dd>`)}</dl>` : ''}
</li>`;
  })}</ol>`;
}
