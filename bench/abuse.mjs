#!/usr/bin/env node
// The "abuse" scenario (issue #34: no single account can stop, starve or read the others). At once,
// against one server process: an attacker's key posts a 1,000 × 20,000 PNG and 500 image URLs on a
// server that trickles (a byte every 250 ms), and a stranger tries 200 sign-ins a minute from one
// address, and the attacker's editor uploads the JSON bomb on the console's Import page every
// second. Meanwhile another gallery reads its own API (p50/p99, goal < 50 ms p99), posts one image
// and waits until it is ready (goal: about one image's time), and the server's RSS is sampled
// (goal < 400 MB) and the process must not restart.
// Halfway through, the gallery's owner signs in from another address (goal: at once).
//
//   node bench/abuse.mjs [--seconds 60] [--urls 500] [--no-scroll]      (needs `npm run build`)
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { benchTenant, cli, currentRssMb, seedArtworks, startService, stop } from './lib.mjs';
import { call, quantile, round, sleep } from './probe.mjs';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '60' }, urls: { type: 'string', default: '500' }, scroll: { type: 'boolean', default: true }, 'no-scroll': { type: 'boolean' } } });
const seconds = Number(values.seconds);
const urls = Number(values.urls);

const photo = await sharp({ create: { width: 1200, height: 800, channels: 3, background: { r: 20, g: 90, b: 160 } } }).jpeg().toBuffer();
const scroll = await sharp({ create: { width: 1000, height: 20_000, channels: 3, background: { r: 120, g: 90, b: 60 } } }).png().toBuffer();
const drips = new Set();
const origin = createServer((request, response) => {
  if (request.url === '/fast.jpg') return response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': photo.length }).end(photo);
  if (request.url === '/scroll.png') return response.writeHead(200, { 'content-type': 'image/png', 'content-length': scroll.length }).end(scroll);
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
  RATE_LIMIT_PARTNER: '1000000000', IMAGE_FETCH_ALLOW_PRIVATE: 'true', TRUST_PROXY: '127.0.0.1',
};
const attacker = benchTenant(env, 'Flood Gallery');
const other = benchTenant(env, 'Other Gallery');
const ownerEmail = `owner-${Date.now()}@other.example`;
const invite = cli(env, 'user', 'invite', '--entity', String(other.entity.id), '--email', ownerEmail, '--role', 'owner');
const OWNER_PASSWORD = 'quiet river lantern orchard';
const editorInvite = cli(env, 'user', 'invite', '--entity', String(attacker.entity.id), '--email', `editor-${Date.now()}@flood.example`, '--role', 'editor');
/** The JSON bomb: 650 KB, 50,000 items with a key each (50,000 × 50,000 cells to a naive reader). */
const bomb = Buffer.from(`[${Array.from({ length: 50_000 }, (_, i) => `{"k${i}":1}`).join(',')}]`);
const server = startService(env);
const url = await server.url;
const pid = server.child.pid;
let restarted = false;
server.child.once('exit', () => { restarted = true; });
const json = (key) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
await seedArtworks(url, json(other.key), 200, 'other');

const rss = [];
const rssTimer = setInterval(() => { try { rss.push(currentRssMb(pid)); } catch { restarted = true; } }, 250);
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
})();
const signIns = { answered: {}, count: 0 };
const signing = (async () => {
  while (Date.now() < deadline) {
    const answer = await formPost('/console/sign-in', { email: `nobody${signIns.count}@example.org`, password: 'wrong password' }, '203.0.113.7');
    signIns.answered[answer.status] = (signIns.answered[answer.status] ?? 0) + 1;
    signIns.count++;
    await sleep(300);
  }
})();

// The other gallery: one image posted now, its reads measured until the end.
const posted = JSON.parse((await post(other.key, 'Next', `${base}/fast.jpg`)).body ?? '{}');
const imageStart = Date.now();
let imageReadyMs = null;
const reads = [];
let owner = null;
while (Date.now() < deadline) {
  // Halfway through the attack, the owner signs in from another address.
  if (owner === null && Date.now() > deadline - (seconds * 1000) / 2) {
    const started = performance.now();
    const answer = await formPost('/console/sign-in', { email: ownerEmail, password: OWNER_PASSWORD }, '198.51.100.20');
    owner = { status: answer.status, ms: performance.now() - started };
  }
  const answer = await call(`${url}/v1/artworks?limit=50`, { headers: json(other.key) });
  reads.push(answer.ms);
  if (imageReadyMs === null && posted.id && reads.length % 10 === 0) {
    const one = await call(`${url}/v1/artworks/${posted.id}`, { headers: json(other.key), keepBody: true });
    if (JSON.parse(one.body).image?.status === 'ready') imageReadyMs = Date.now() - imageStart;
  }
  await sleep(20);
}
await signing;
await bombing;
loads.push(loadavg()[0]);
clearInterval(rssTimer);

const rows = [
  ['other gallery reads p50 (ms)', round(quantile(reads, 0.5)), '—'],
  ['other gallery reads p99 (ms)', round(quantile(reads, 0.99)), '< 50'],
  ['other gallery reads', reads.length, '—'],
  ['its next image ready after (s)', imageReadyMs === null ? `not within ${seconds}` : round(imageReadyMs / 1000), 'about one image\'s time'],
  ['server RSS max (MB)', round(Math.max(...rss)), '< 400'],
  ['sign-ins tried (answers)', `${signIns.count} ${JSON.stringify(signIns.answered)}`, '429 after 20'],
  ['JSON bombs uploaded (answers)', `${bombs.count} ${JSON.stringify(bombs.answered)}`, 'one message, nothing written'],
  ['owner sign-in from another address', owner ? `${owner.status} in ${round(owner.ms)} ms` : 'not tried', '303 at once'],
  ['process restarted', restarted ? 'yes' : 'no', 'no'],
  ['machine load (1 min, start → end)', loads.map((l) => l.toFixed(1)).join(' → '), '—'],
];
console.log('| measure | value | goal |\n|---|---|---|');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);

for (const drip of drips) clearInterval(drip);
origin.closeAllConnections();
origin.close();
await stop(server.child);
rmSync(dir, { recursive: true, force: true });
