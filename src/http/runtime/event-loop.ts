import { Gauge, Histogram, type Registry } from 'prom-client';

/** How often the event loop is sampled: a stall shorter than this may go unseen, a longer one never. */
const SAMPLE_INTERVAL_MS = 10;
/** The budget is 50 ms (docs/architecture.md, The event-loop budget): buckets around it, up to the stalls of the bad old days. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Event-loop delay (docs/architecture.md, The event-loop budget), as a Prometheus
 * histogram: a timer due every 10 ms records how late it fires, so every stall is one observation of
 * its length and none is lost between scrapes (prom-client's default `nodejs_eventloop_lag_*` gauges,
 * from perf_hooks' monitorEventLoopDelay, cover only the last scrape interval). A gauge keeps the worst
 * delay since the server started listening: `serving()` forgets what building the app held (importing
 * and compiling, migrations: hundreds of milliseconds in one turn, with no request to delay).
 */
export function registerEventLoopMetrics(register: Registry): { stop: () => void; serving: () => void } {
  const delay = new Histogram({
    name: 'art_catalog_event_loop_delay_seconds',
    help: `How late a timer due every ${SAMPLE_INTERVAL_MS} ms fired: time the event loop was blocked.`,
    buckets: BUCKETS,
    registers: [register],
  });
  const worst = new Gauge({
    name: 'art_catalog_event_loop_delay_max_seconds',
    help: 'The longest event-loop delay seen since the server started listening.',
    registers: [register],
  });
  let max = 0;
  let due = performance.now() + SAMPLE_INTERVAL_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - due) / 1000;
    due = now + SAMPLE_INTERVAL_MS;
    delay.observe(late);
    if (late > max) {
      max = late;
      worst.set(max);
    }
  }, SAMPLE_INTERVAL_MS);
  // Sampling must never keep the process alive.
  timer.unref();
  return {
    stop: () => clearInterval(timer),
    serving: () => {
      delay.reset();
      worst.set((max = 0));
      due = performance.now() + SAMPLE_INTERVAL_MS;
    },
  };
}
