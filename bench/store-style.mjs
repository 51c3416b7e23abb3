// Compares the two ways store code could talk to the database, on the same SQLite file (or the
// PostgreSQL database of --database-url): a point read and a one-row write through statements and
// works (src/db), and the same through Kysely's query builder (build, compile and execute each time).
// Prints microseconds per operation. Run after `npm run build`:
//   node bench/store-style.mjs [--database-url URL] [--n 20000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect } from '../dist/db/connect.js';
import { migrateToLatest } from '../dist/db/migrate.js';
import { read, transaction } from '../dist/db/run.js';
import { statement } from '../dist/db/statement.js';
import { first } from '../dist/db/work.js';
import { createEntity } from '../dist/store/entities.js';

const { values } = parseArgs({ options: { 'database-url': { type: 'string' }, n: { type: 'string', default: '20000' } } });
const n = Number(values.n);
const dir = values['database-url'] ? null : mkdtempSync(join(tmpdir(), 'store-style-'));
const handle = connect(values['database-url'] ?? `sqlite:${join(dir, 'bench.db')}`);
await migrateToLatest(handle);
const { db } = handle;
const entity = await createEntity(db, { type: 'gallery', name: `Store Style ${Date.now()}` });
const at = new Date().toISOString();

const byId = statement((db, p) => db.selectFrom('entities').selectAll().where('id', '=', p.id));
const touch = statement((db, p) => db.updateTable('entities').set({ updated_at: p.at }).where('id', '=', p.id));

async function time(label, operation, count = n) {
  for (let i = 0; i < Math.min(1000, count); i++) await operation(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await operation(i);
  const us = Number(process.hrtime.bigint() - start) / 1000 / count;
  console.log(`${label.padEnd(44)} ${us.toFixed(1).padStart(8)} µs`);
  return us;
}

console.log(`${handle.dialect}, ${n} operations each`);
await time('point read: statement + read()', () => read(db, () => first(byId, { id: entity.id })));
await time('point read: Kysely executeTakeFirst()', () => db.selectFrom('entities').selectAll().where('id', '=', entity.id).executeTakeFirst());
const writes = Math.min(n, 5000);
await time('one-row write: work + transaction()', () => transaction(db, () => first(touch, { id: entity.id, at })), writes);
await time('one-row write: Kysely transaction', () => db.transaction().execute((trx) =>
  trx.updateTable('entities').set({ updated_at: at }).where('id', '=', entity.id).execute()), writes);
await time('20 concurrent one-row writes: works (per write)', async (i) => {
  if (i % 20 !== 0) return;
  await Promise.all(Array.from({ length: 20 }, () => transaction(db, () => first(touch, { id: entity.id, at }))));
}, writes);
await handle.close();
if (dir) rmSync(dir, { recursive: true, force: true });
