#!/usr/bin/env node
// The "abuse" scenario (issue #34: no single account can stop, starve or read the others). At once,
// against one server process: an attacker's key posts a 1,000 × 20,000 PNG and 500 image URLs on a
// server that trickles (a byte every 250 ms), and a stranger tries 200 sign-ins a minute from one
// address, and the attacker's editor uploads the issue's JSON bomb on the console's Import page every
// second. Meanwhile another gallery reads its own API (p50/p99, goal < 50 ms p99), posts one image
// and waits until it is ready (goal: about one image's time), and the server's RSS is sampled
// (goal < 400 MB) and the process must not restart.
// Halfway through, the gallery's owner signs in from another address (goal: at once).
// Issue #44 adds two: a hostile feed (10 feeds of the attacker's key, each reading an .xlsx whose end
// record counts one entry fewer than the zip holds, the hidden entry 1 GiB of zeros deflated to ~1 MB,
// served again at every run and "Run now" again as soon as allowed), and 100 parallel console Connects
// from the attacker's editor, each of a 19 MB file. Reads are measured against a bare node:http server
// (bench/baseline.mjs) probed in the same loop, and quoted as ratios to it.
//
//   node bench/abuse.mjs [--seconds 60] [--urls 500] [--no-scroll] [--connects 100]      (needs `npm run build`)
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { constants, crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import ExcelJS from 'exceljs';
import sharp from 'sharp';
import { ROOT, benchTenant, cli, currentRssMb, seedArtworks, startProcess, startService, stop } from './lib.mjs';
import { call, quantile, round, sleep } from './probe.mjs';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '60' }, urls: { type: 'string', default: '500' }, connects: { type: 'string', default: '100' }, scroll: { type: 'boolean', default: true }, 'no-scroll': { type: 'boolean' } } });
const seconds = Number(values.seconds);
const urls = Number(values.urls);
const connects = Number(values.connects);

/**
 * The hostile .xlsx of issue #44: a workbook exceljs wrote, zipped again with one more entry than its end
 * record counts, that entry 1 GiB of zeros (one megabyte deflated with a full flush is the same bytes
 * each time, so the stream is that block 1,024 times and an empty final block: ~1 MB, never 1 GiB held).
 */
async function understatedXlsx() {
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet('Sheet1');
  sheet.addRow(['title', 'external_id']);
  sheet.addRow(['Hidden Work', 'H-1']);
  const written = Buffer.from(await book.xlsx.writeBuffer());
  const end = written.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const entries = [];
  for (let at = written.readUInt32LE(end + 16), i = 0; i < written.readUInt16LE(end + 10); i++) {
    const nameLength = written.readUInt16LE(at + 28);
    const local = written.readUInt32LE(at + 42);
    const start = local + 30 + written.readUInt16LE(local + 26) + written.readUInt16LE(local + 28);
    const stored = written.subarray(start, start + written.readUInt32LE(at + 20));
    const data = written.readUInt16LE(at + 10) === 8 ? inflateRawSync(stored) : Buffer.from(stored);
    entries.push({ name: written.toString('utf8', at + 46, at + 46 + nameLength), bytes: deflateRawSync(data), size: data.length, crc: crc32(data) });
    at += 46 + nameLength + written.readUInt16LE(at + 30) + written.readUInt16LE(at + 32);
  }
  const zeros = Buffer.alloc(1024 * 1024);
  const block = deflateRawSync(zeros, { finishFlush: constants.Z_FULL_FLUSH });
  let crc = 0;
  for (let i = 0; i < 1024; i++) crc = crc32(zeros, crc);
  const counted = entries.length;
  entries.push({ name: 'xl/media/image1.png', bytes: Buffer.concat([...Array(1024).fill(block), Buffer.from([0x03, 0x00])]), size: 1024 * 1024 * 1024, crc });
  const locals = [];
  const directory = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(8, 8);
    local.writeUInt32LE(entry.crc, 14); local.writeUInt32LE(entry.bytes.length, 18); local.writeUInt32LE(entry.size, 22); local.writeUInt16LE(name.length, 26);
    const record = Buffer.alloc(46);
    record.writeUInt32LE(0x02014b50, 0); record.writeUInt16LE(20, 4); record.writeUInt16LE(20, 6); record.writeUInt16LE(8, 10);
    record.writeUInt32LE(entry.crc, 16); record.writeUInt32LE(entry.bytes.length, 20); record.writeUInt32LE(entry.size, 24); record.writeUInt16LE(name.length, 28);
    record.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.bytes);
    directory.push(record, name);
    offset += 30 + name.length + entry.bytes.length;
  }
  const central = Buffer.concat(directory);
  const tail = Buffer.alloc(22);
  tail.writeUInt32LE(0x06054b50, 0); tail.writeUInt16LE(counted, 8); tail.writeUInt16LE(counted, 10);
  tail.writeUInt32LE(central.length, 12); tail.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, central, tail]);
}
const hostile = await understatedXlsx();
/** What each of the 100 Connects reads: a CSV of 19 MB, within the 20 MB a fetch may read. */
const big = Buffer.from(`title,external_id\n${Array.from({ length: 380_000 }, (_, i) => `Connect work ${String(i).padStart(12, '0')} ${'x'.repeat(12)},C-${String(i).padStart(8, '0')}`).join('\n')}\n`.slice(0, 19_000_000).replace(/\n[^\n]*$/, '\n'));
let hostileServed = 0;
let bigServed = 0;

const photo = await sharp({ create: { width: 1200, height: 800, channels: 3, background: { r: 20, g: 90, b: 160 } } }).jpeg().toBuffer();
const scroll = await sharp({ create: { width: 1000, height: 20_000, channels: 3, background: { r: 120, g: 90, b: 60 } } }).png().toBuffer();
const drips = new Set();
const origin = createServer((request, response) => {
  if (request.url === '/fast.jpg') return response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': photo.length }).end(photo);
  if (request.url === '/scroll.png') return response.writeHead(200, { 'content-type': 'image/png', 'content-length': scroll.length }).end(scroll);
  if (request.url.startsWith('/hostile-')) {
    hostileServed++;
    return response.writeHead(200, { 'content-type': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'content-length': hostile.length }).end(hostile);
  }
  if (request.url.startsWith('/big-')) {
    bigServed++;
    return response.writeHead(200, { 'content-type': 'text/csv', 'content-length': big.length }).end(big);
  }
  response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': photo.length });
  let sent = 0;
  const drip = setInterval(() => { if (!response.destroyed) response.write(photo.subarray(sent, ++sent)); }, 250);
  drips.add(drip);
  response.on('close', () => { clearInterval(drip); drips.delete(drip); });
});
await new Promise((resolve) => origin.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${origin.address().port}`;

const dir = mkdtempSync(join(tmpdir(), 'art-catalog-abuse-'));
const env = {
  DATABASE_URL: `sqlite:${join(dir, 'abuse.db')}`, IMAGE_STORE: `file:${join(dir, 'images')}`, LOG_LEVEL: 'warn', PORT: '0',
  RATE_LIMIT_PARTNER: '1000000000', IMAGE_FETCH_ALLOW_PRIVATE: 'true', FETCH_ALLOW_PRIVATE: 'true', TRUST_PROXY: '127.0.0.1',
};
const attacker = benchTenant(env, 'Flood Gallery');
const other = benchTenant(env, 'Other Gallery');
const ownerEmail = `owner-${Date.now()}@other.example`;
const invite = cli(env, 'user', 'invite', '--entity', String(other.entity.id), '--email', ownerEmail, '--role', 'owner');
const OWNER_PASSWORD = 'quiet river lantern orchard';
const editorInvite = cli(env, 'user', 'invite', '--entity', String(attacker.entity.id), '--email', `editor-${Date.now()}@flood.example`, '--role', 'editor');
/** The issue's JSON bomb: 650 KB, 50,000 items with a key each (50,000 × 50,000 cells to a naive reader). */
const bomb = Buffer.from(`[${Array.from({ length: 50_000 }, (_, i) => `{"k${i}":1}`).join(',')}]`);
const server = startService(env);
const url = await server.url;
const bare = startProcess(process.execPath, [join(ROOT, 'bench', 'baseline.mjs')], {});
const bareUrl = await bare.url;
const pid = server.child.pid;
let restarted = false;
server.child.once('exit', () => { restarted = true; });
const json = (key) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
await seedArtworks(url, json(other.key), 200, 'other');

const rss = [];
// A server past 1.5 GB is stopped, not left to thrash a shared machine: the run then reports it.
const RSS_CEILING_MB = 1536;
let stoppedAtMb = null;
const rssTimer = setInterval(() => {
  try {
    rss.push(currentRssMb(pid));
    if (rss.at(-1) > RSS_CEILING_MB && stoppedAtMb === null) {
      stoppedAtMb = rss.at(-1);
      server.child.kill('SIGKILL');
    }
  } catch { restarted = true; }
}, 250);
const loads = [loadavg()[0]];

// The attack: the scroll and the trickling URLs, then sign-ins at 200 a minute from one address.
const post = (key, title, image_url) => call(`${url}/v1/artworks`, { method: 'POST', headers: json(key), body: JSON.stringify({ title, image_url }), keepBody: true });
if (!values['no-scroll']) await post(attacker.key, 'Scroll', `${base}/scroll.png`);
for (let i = 0; i < urls; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => post(attacker.key, `Trickle ${i + j}`, `${base}/slow-${i + j}.jpg`)));
const deadline = Date.now() + seconds * 1000;

/** A form post as a browser makes it, from `address`: the form's page for its cookie and token, then the post. */
async function formPost(path, fields, address) {
  const from = { 'x-forwarded-for': address };
  const form = await call(`${url}${path}`, { headers: from, keepBody: true });
  const cookie = [form.headers['set-cookie'] ?? []].flat().map((line) => line.split(';')[0]).join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const body = new URLSearchParams({ _csrf: csrf, ...fields }).toString();
  const answer = await call(`${url}${path}`, { method: 'POST', headers: { ...from, cookie, 'content-type': 'application/x-www-form-urlencoded', origin: url }, body });
  const session = [answer.headers['set-cookie'] ?? []].flat().map((line) => line.split(';')[0]);
  return { ...answer, cookie: [cookie, ...session].filter(Boolean).join('; ') };
}
// The owner sets a password (the invite's page) before the attack; signs in during it.
const invitePath = new URL(invite.link).pathname;
const set = await formPost(invitePath, { password: OWNER_PASSWORD }, '198.51.100.20');
if (set.status !== 303) throw new Error(`the owner's invite answered ${set.status}`);
// The attacker's editor sets a password (signed in by it), then uploads the bomb on the Import page over and over.
const editor = await formPost(new URL(editorInvite.link).pathname, { password: 'flood flood flood flood' }, '192.0.2.50');
// The hostile feed: 10 feeds (the most an account may have), each its own URL serving the zip; each
// run is queued at once, and "Run now" is asked again whenever a feed's last run has ended.
const feeds = { ids: [], runs: {}, nowAnswered: {} };
for (let i = 0; i < 10; i++) {
  const created = await call(`${url}/v1/feeds`, { method: 'POST', headers: json(attacker.key), body: JSON.stringify({ url: `${base}/hostile-${i}.xlsx`, kind: 'artworks', interval_minutes: 15 }), keepBody: true });
  if (created.status === 201) feeds.ids.push(JSON.parse(created.body).id);
  else feeds.nowAnswered[`create ${created.status}`] = (feeds.nowAnswered[`create ${created.status}`] ?? 0) + 1;
}
const feeding = (async () => {
  const seen = new Set();
  while (Date.now() < deadline) {
    for (const id of feeds.ids) {
      const runs = JSON.parse((await call(`${url}/v1/feeds/${id}/runs?limit=20`, { headers: json(attacker.key), keepBody: true })).body ?? '{}').runs ?? [];
      for (const run of runs) {
        if (['queued', 'running'].includes(run.status) || seen.has(run.id)) continue;
        seen.add(run.id);
        const outcome = `${run.status}: ${(run.error ?? '').slice(0, 60)}`;
        feeds.runs[outcome] = (feeds.runs[outcome] ?? 0) + 1;
      }
      if (runs[0] && !['queued', 'running'].includes(runs[0].status)) {
        const now = await call(`${url}/v1/feeds/${id}/runs`, { method: 'POST', headers: json(attacker.key), body: '{}' });
        feeds.nowAnswered[now.status] = (feeds.nowAnswered[now.status] ?? 0) + 1;
      }
    }
    await sleep(2000);
  }
})().catch(() => undefined);
// The 100 parallel Connects: the attacker's editor posts the Feeds page's Connect form 100 times at once,
// a third of the way in, each naming a 19 MB file.
const connected = { answered: {}, ms: [] };
const connecting = (async () => {
  if (connects === 0) return;
  await sleep((seconds * 1000) / 3);
  const page = await call(`${url}/console/feeds`, { headers: { cookie: editor.cookie }, keepBody: true });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
  await Promise.all(Array.from({ length: connects }, async (_, i) => {
    const body = new URLSearchParams({ _csrf: csrf, url: `${base}/big-${i}.csv`, kind: 'artworks', sheet: '' }).toString();
    try {
      const answer = await call(`${url}/console/feeds/connect`, { method: 'POST', headers: { cookie: editor.cookie, 'content-type': 'application/x-www-form-urlencoded', origin: url }, body });
      connected.answered[answer.status] = (connected.answered[answer.status] ?? 0) + 1;
      connected.ms.push(answer.ms);
    } catch (error) {
      connected.answered[error.code ?? 'error'] = (connected.answered[error.code ?? 'error'] ?? 0) + 1;
    }
  }));
})().catch(() => undefined);
const bombs = { answered: {}, count: 0 };
const bombing = (async () => {
  while (Date.now() < deadline) {
    const page = await call(`${url}/console/import`, { headers: { cookie: editor.cookie }, keepBody: true });
    const action = /action="(\/console\/import\?_csrf=[^"]+)"/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
    let status = page.status;
    if (action) {
      const form = new FormData();
      form.append('kind', 'artworks');
      form.append('file', new Blob([bomb]), 'bomb.json');
      const answer = await fetch(`${url}${action}`, { method: 'POST', body: form, headers: { cookie: editor.cookie, origin: url }, redirect: 'manual' });
      const text = await answer.text();
      // The refusal names the bound (docs/api.md, Bounds on what a file may hold); anything else is counted apart.
      status = /more than 200 distinct keys/.test(text) ? `${answer.status} refused` : answer.status;
    }
    bombs.answered[status] = (bombs.answered[status] ?? 0) + 1;
    bombs.count++;
    await sleep(1000);
  }
})().catch(() => undefined);
const signIns = { answered: {}, count: 0 };
const signing = (async () => {
  while (Date.now() < deadline) {
    const answer = await formPost('/console/sign-in', { email: `nobody${signIns.count}@example.org`, password: 'wrong password' }, '203.0.113.7');
    signIns.answered[answer.status] = (signIns.answered[answer.status] ?? 0) + 1;
    signIns.count++;
    await sleep(300);
  }
})().catch(() => undefined);

// The other gallery: one image posted now, its reads measured until the end.
const posted = JSON.parse((await post(other.key, 'Next', `${base}/fast.jpg`)).body ?? '{}');
const imageStart = Date.now();
let imageReadyMs = null;
const reads = [];
const bareReads = [];
let owner = null;
while (Date.now() < deadline) {
  // Halfway through the attack, the owner signs in from another address.
  if (owner === null && Date.now() > deadline - (seconds * 1000) / 2) {
    const started = performance.now();
    const answer = await formPost('/console/sign-in', { email: ownerEmail, password: OWNER_PASSWORD }, '198.51.100.20');
    owner = { status: answer.status, ms: performance.now() - started };
  }
  const answer = await call(`${url}/v1/artworks?limit=50`, { headers: json(other.key) }).catch(() => null);
  if (answer === null) break;
  reads.push(answer.ms);
  bareReads.push((await call(`${bareUrl}/`)).ms);
  if (imageReadyMs === null && posted.id && reads.length % 10 === 0) {
    const one = await call(`${url}/v1/artworks/${posted.id}`, { headers: json(other.key), keepBody: true }).catch(() => null);
    if (one && JSON.parse(one.body).image?.status === 'ready') imageReadyMs = Date.now() - imageStart;
  }
  await sleep(20);
}
// Each attack's loop ends at the deadline, or when the server is gone.
await Promise.all([signing, bombing, feeding, connecting]);
loads.push(loadavg()[0]);
clearInterval(rssTimer);

// A process that died may not be reaped yet (its /proc entry has no memory line): that is an exit too.
const exited = () => restarted || server.child.exitCode !== null || server.child.signalCode !== null || rss.some((mb) => Number.isNaN(mb));
const ratio = (q) => (quantile(reads, q) / quantile(bareReads, q)).toFixed(1);
const rows = [
  ['other gallery reads p50 (ms)', round(quantile(reads, 0.5)), '—'],
  ['other gallery reads p99 (ms)', round(quantile(reads, 0.99)), '< 50'],
  ['other gallery reads', reads.length, '—'],
  ['bare node:http reads p50 / p99 (ms), same loop', `${round(quantile(bareReads, 0.5))} / ${round(quantile(bareReads, 0.99))}`, '—'],
  ['reads ÷ bare, p50 / p99', `${ratio(0.5)} / ${ratio(0.99)}`, '—'],
  ['its next image ready after (s)', imageReadyMs === null ? `not within ${seconds}` : round(imageReadyMs / 1000), 'about one image\'s time'],
  ['server RSS max (MB)', round(Math.max(...rss.filter((mb) => !Number.isNaN(mb)))), '< 400'],
  ['sign-ins tried (answers)', `${signIns.count} ${JSON.stringify(signIns.answered)}`, '429 after 20'],
  ['JSON bombs uploaded (answers)', `${bombs.count} ${JSON.stringify(bombs.answered)}`, 'one message, nothing written'],
  ['hostile feed runs (outcomes)', `${JSON.stringify(feeds.runs)}; zip served ${hostileServed} times; Run now ${JSON.stringify(feeds.nowAnswered)}`, 'failed: not a valid xlsx file'],
  [`${connects} parallel Connects of 19 MB (answers)`, `${JSON.stringify(connected.answered)}; files served ${bigServed}; slowest ${round(Math.max(0, ...connected.ms) / 1000)} s`, 'bounded by the 2 import slots'],
  ['owner sign-in from another address', owner ? `${owner.status} in ${round(owner.ms)} ms` : 'not tried', '303 at once'],
  ['process restarted', exited() ? `yes: ${stoppedAtMb === null ? `it exited (${server.child.exitCode ?? server.child.signalCode})` : `stopped by the bench at ${round(stoppedAtMb)} MB`}` : 'no', 'no'],
  ['machine load (1 min, start → end)', loads.map((l) => l.toFixed(1)).join(' → '), '—'],
];
console.log('| measure | value | goal |\n|---|---|---|');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);

for (const drip of drips) clearInterval(drip);
origin.closeAllConnections();
origin.close();
if (!exited()) await stop(server.child);
await stop(bare.child);
rmSync(dir, { recursive: true, force: true });
