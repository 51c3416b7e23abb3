// Round trips per POST: counts pg client queries (BEGIN and COMMIT included) for new posts and re-posts.
import pg from 'pg';
const root = process.argv[2];
const { connect } = await import(`${root}/dist/db/connect.js`);
const { migrateToLatest } = await import(`${root}/dist/db/migrate.js`);
const { createEntity } = await import(`${root}/dist/store/entities.js`);
const { postArtwork, postArtworksWork } = await import(`${root}/dist/store/artworks.js`);
const { transaction } = await import(`${root}/dist/db/run.js`);
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await admin.connect();
const name = `wp_count_${process.pid}`;
await admin.query(`create database ${name}`);
let queries = 0;
const original = pg.Client.prototype.query;
pg.Client.prototype.query = function (...args) { queries++; return original.apply(this, args); };
const handle = connect(`postgres://postgres@127.0.0.1:5432/${name}`);
try {
  await migrateToLatest(handle);
  for (const hooked of [false]) {
    const entity = await createEntity(handle.db, { type: 'gallery', name: `Count ${hooked}` });
    if (hooked) await handle.db.insertInto('webhook_endpoints').values({ owner_id: entity.id, url: 'https://hooks.example/x', events: '*', enabled: 1, secret: 'x', description: '', created_at: new Date().toISOString(), updated_at: new Date().toISOString() }).execute().catch((e) => { console.error('endpoint:', e.message); });
    const actor = { entityId: entity.id, entitySlug: entity.slug, source: 'api:count' };
    const work = (i, price) => ({ title: `Count ${i}`, artist_name: 'Count Artist', creation_year: 2000, price, currency: 'EUR', availability: 'available' });
    await postArtwork(handle.db, actor, work(-1, 1)); // the artist, known from now on
    const measure = async (label, fn) => { const before = queries; for (let i = 0; i < 50; i++) await fn(i); console.log(`${hooked ? 'with endpoint' : 'no endpoint'}: ${label}: ${((queries - before) / 50).toFixed(2)} queries per POST`); };
    const items = (b, price) => Array.from({ length: 100 }, (_, j) => work(1000 + b * 100 + j, price));
    let started = performance.now();
    await measure('batch of 100 new (per batch)', (b) => transaction(handle.db, () => postArtworksWork(handle.db, actor, items(b, 100))));
    console.log(`  5,000 artworks by batch in ${((performance.now() - started) / 1000).toFixed(2)} s`);

  }
} finally {
  await handle.close();
  await admin.query(`drop database ${name} with (force)`);
  await admin.end();
}
