// Loaded into a service by a bench (SERVE_NODE_OPTIONS="--import /abs/bench/pg-trace-hook.mjs") to
// count the PostgreSQL statements it sends: per statement text, the calls and the time from sending to
// the answer (a round trip, the wait for the connection's earlier queries excluded as pg queues them).
// Written at exit to BENCH_PG_TRACE_DIR/<pid>.json; bench/webhooks.mjs --trace sums them per delivery.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

const dir = process.env.BENCH_PG_TRACE_DIR;
const seen = new Map();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function traced(config, values, callback) {
  const text = typeof config === 'string' ? config : config?.text;
  if (typeof text !== 'string') return query.call(this, config, values, callback);
  const started = performance.now();
  const key = text.replace(/\s+/g, ' ').slice(0, 160);
  const note = () => {
    const entry = seen.get(key) ?? { calls: 0, ms: 0 };
    entry.calls += 1;
    entry.ms += performance.now() - started;
    seen.set(key, entry);
  };
  // pg.Pool's own query() passes a callback (values, or in its place); a client's query() without one answers a promise.
  const done = typeof callback === 'function' ? callback : typeof values === 'function' ? values : undefined;
  if (done) {
    const wrapped = (...args) => { note(); return done(...args); };
    return done === callback ? query.call(this, config, values, wrapped) : query.call(this, config, wrapped);
  }
  const answer = query.call(this, config, values);
  return answer && typeof answer.then === 'function' ? answer.finally(note) : answer;
};
process.on('exit', () => {
  if (dir) writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify([...seen]));
});
