// What the stall scenarios share: a /healthz probe in its own thread (a request that blocks the
// server's event loop shows up as a slow health answer), HTTP calls on a keep-alive agent, and numbers.
import { Agent, request } from 'node:http';
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { BIN, startProcess, stop } from './lib.mjs';

export const STALL_BUDGET_MS = 50;

/** The probe: sequential health requests on one keep-alive connection, latencies grouped by phase. */
const PROBE = `
  const { parentPort, workerData } = require('node:worker_threads');
  const http = require('node:http');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let phase = 'idle'; const samples = new Map(); let running = true;
  parentPort.on('message', (m) => { if (m === 'stop') running = false; else phase = m; });
  const once = () => new Promise((resolve) => {
    const start = performance.now();
    http.get(workerData.url + '/healthz', { agent }, (res) => { res.resume(); res.on('end', () => resolve(performance.now() - start)); })
      .on('error', () => resolve(NaN));
  });
  (async () => {
    while (running) {
      const at = phase; const ms = await once();
      if (!samples.has(at)) samples.set(at, []);
      samples.get(at).push(ms);
      await new Promise((r) => setTimeout(r, 5));
    }
    parentPort.postMessage([...samples]);
  })();
`;

/** Starts the probe; `phase(name)` labels the samples that follow, `stop()` resolves them by phase. */
export function startProbe(url) {
  const worker = new Worker(PROBE, { eval: true, workerData: { url } });
  return {
    phase: (name) => worker.postMessage(name),
    async stop() {
      worker.postMessage('stop');
      const samples = new Map(await new Promise((resolve) => worker.once('message', resolve)));
      await worker.terminate();
      return samples;
    },
  };
}

export const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One HTTP exchange on the shared keep-alive agent; resolves status, headers, body length and time. */
export function call(url, { method = 'GET', headers = {}, body, keepBody = false } = {}) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = request(url, { method, headers, agent }, (res) => {
      let bytes = 0;
      const chunks = [];
      res.on('data', (chunk) => { bytes += chunk.length; if (keepBody) chunks.push(chunk); });
      res.on('end', () => resolve({
        status: res.statusCode, headers: res.headers, bytes, ms: performance.now() - start,
        ...(keepBody ? { body: Buffer.concat(chunks).toString('utf8') } : {}),
      }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A GET's body as text; anything but a 2xx rejects. */
export async function text(url, headers) {
  const { status, body } = await call(url, { headers, keepBody: true });
  if (status >= 300) throw new Error(`${url}: ${status} ${body}`);
  return body;
}

/** Runs `workers` loops of `step` for `seconds`; returns every step's time and the statuses seen. */
export async function phaseLoad(seconds, workers, step) {
  const until = performance.now() + seconds * 1000;
  const times = [];
  const statuses = {};
  let i = 0;
  await Promise.all(Array.from({ length: workers }, async () => {
    while (performance.now() < until) {
      const result = await step(i++);
      times.push(result.ms);
      statuses[result.status] = (statuses[result.status] ?? 0) + 1;
    }
  }));
  return { times, statuses };
}

export const quantile = (values, q) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
};
/**
 * The server's own event-loop delays so far (its /metrics histogram: a timer due every 10 ms, how late
 * it fired): how many were over the stall budget, and the bucket the worst fell in. Two readings give
 * a phase's; unlike the probe's wall-clock answers, they leave out the time the probe and the network
 * took, so a slow probe answer with no late timer was the machine, not the server.
 */
export async function loopDelays(url) {
  const metrics = await text(`${url}/metrics`);
  const buckets = [...metrics.matchAll(/^art_catalog_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\d+)/gm)]
    .map(([, le, n]) => ({ le: le === '+Inf' ? Infinity : Number(le) * 1000, n: Number(n) }));
  return buckets;
}

/** Between two readings of loopDelays: timers late by more than the budget, and the worst delay's bucket. */
export function loopDelaysBetween(before, after) {
  const count = (readings, le) => readings.find((b) => b.le === le)?.n ?? 0;
  const over = count(after, Infinity) - count(before, Infinity) - (count(after, STALL_BUDGET_MS) - count(before, STALL_BUDGET_MS));
  let worst = '≤ 5 ms';
  for (let i = 1; i < after.length; i++) {
    if (after[i].n - before[i].n > after[i - 1].n - before[i - 1].n) worst = `${after[i - 1].le}–${after[i].le} ms`;
  }
  return { over_budget: over, worst_bucket: worst };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const mean = (values) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
export const round = (value) => Math.round(value * 10) / 10;
export const roundAll = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v)]));

/** The probe's samples, every phase together, summed up. */
export const summary = (samples) => {
  const all = [...samples.values()].flat().filter(Number.isFinite);
  return { n: all.length, p50: round(quantile(all, 0.5)), p99: round(quantile(all, 0.99)), max: round(Math.max(...all)), over: all.filter((ms) => ms >= STALL_BUDGET_MS).length };
};

/** The bare node:http baseline's /healthz-equivalent answers under the same probe, for `seconds`. */
export async function baselineProbe(seconds) {
  const base = startProcess(process.execPath, [join(BIN, '..', '..', 'bench', 'baseline.mjs')], {});
  const probe = startProbe(await base.url);
  await sleep(seconds * 1000);
  const samples = await probe.stop();
  await stop(base.child);
  return summary(samples);
}
