// Preloaded (`node --expose-gc --import`) into a server under test: a full garbage collection every
// few milliseconds. `execution: 'async'` runs it as a task of V8's platform, outside any JavaScript
// context, as V8 does on its own under load: native objects (prepared statements) are then finalized
// the way that aborted better-sqlite3 12 on Node >= 24.19.
const interval = Number(process.env.FORCE_GC_INTERVAL_MS || 10);
setInterval(() => {
  globalThis.gc({ type: 'major', execution: 'async' });
}, interval).unref();
