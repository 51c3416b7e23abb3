import type { ChangelogRow } from '../db/types.js';

/**
 * A changelog entry's JSON text, made from the stored row without parsing anything: `field_changes`
 * is stored as the JSON text the API sends (JSON.stringify of the write's changes), so a page of any
 * size costs string concatenation, never a parse and a stringify of every old and new value.
 */
export function changelogEntryJson(row: ChangelogRow): string {
  return `{"id":${Number(row.id)},"entity_type":${JSON.stringify(row.entity_type)},"entity_id":${Number(row.record_id)},`
    + `"action":${JSON.stringify(row.action)},"source":${JSON.stringify(row.source)},"field_changes":${row.field_changes},`
    + `"created_at":${JSON.stringify(row.created_at)},"run_id":${row.run_id === null ? 'null' : Number(row.run_id)}}`;
}

/** A changelog page as JSON text slices: `{"changes":[` + the entries, a chunk a slice + the page's members. */
export async function* changelogPageJson(chunks: AsyncIterable<ChangelogRow[]>, members: object): AsyncGenerator<string> {
  let separator = '{"changes":[';
  for await (const rows of chunks) {
    let slice = '';
    for (const row of rows) {
      slice += separator + changelogEntryJson(row);
      separator = ',';
    }
    yield slice;
  }
  yield `${separator === ',' ? '' : separator}],${JSON.stringify(members).slice(1)}`;
}
