#!/usr/bin/env node
// A gallery's own sync job, written against the published client (`art-catalog-service/client`):
// the first run reads the whole catalog by cursor, later runs read only the changelog entries written
// since the previous run. The changelog position is kept in a small JSON file.
//
//   ART_CATALOG_URL=http://127.0.0.1:3000 ART_CATALOG_KEY=ak_live_… node examples/client-sync.mjs [STATE_FILE]
//
// STATE_FILE defaults to ./client-sync-state.json; delete it to start over.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ArtCatalogClient } from 'art-catalog-service/client';

const stateFile = process.argv[2] ?? 'client-sync-state.json';
const client = new ArtCatalogClient({ baseUrl: process.env.ART_CATALOG_URL, key: process.env.ART_CATALOG_KEY });
// `{ since }` until the first change has been seen, `{ after }` (a changelog entry id) from then on.
let position = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : null;

if (position === null) {
  // Changes written while the catalog is read are picked up by the changelog read below: starting it a
  // minute before only repeats a few changes (a clock a little off does no harm), and applying one twice is harmless.
  position = { since: new Date(Date.now() - 60_000).toISOString() };
  const artworks = [];
  for await (const artwork of client.iterateArtworks()) artworks.push(artwork); // a real job stores them in its own database
  const events = [];
  for await (const event of client.iterateEvents()) events.push(event);
  console.log(`read ${artworks.length} artworks and ${events.length} events`);
}

// The changelog by cursor: never advance `since` to the last timestamp seen (the entries of one
// millisecond share it); remember the last entry's id and continue with `after`.
let changes = 0;
for await (const change of client.iterateChanges(position)) {
  const fields = Object.keys(change.field_changes).filter((field) => field !== 'last_synced_at');
  console.log(`change ${change.id}: ${change.action} ${change.entity_type} ${change.entity_id}${fields.length ? ` (${fields.join(', ')})` : ''}`);
  position = { after: change.id };
  changes++;
}
writeFileSync(stateFile, `${JSON.stringify(position)}\n`);
console.log(`${changes} changes; the next run continues from ${JSON.stringify(position)}`);
