import cliProgress from 'cli-progress';
import { cliIo } from './io.js';

export interface Counts {
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  deleted: number;
}

export interface Progress {
  /** `done` of `total` steps (rows sent, then records deleted). */
  update(done: number, total: number, counts: Counts): void;
  note(message: string): void;
  stop(): void;
}

const tally = (c: Counts, separator: string): string =>
  [`created ${c.created}`, `updated ${c.updated}`, `unchanged ${c.unchanged}`, `failed ${c.failed}`, ...(c.deleted ? [`deleted ${c.deleted}`] : [])].join(separator);

/**
 * The bar's line, at most `width` characters: a line wider than the terminal wraps, and the bar's
 * redraw then stacks a new copy under the old one at every update.
 */
export function progressLine(done: number, total: number, counts: Counts, width: number): string {
  const text = ` ${done}/${total} | ${tally(counts, ' ')}`;
  const room = width - 1 - 'push [] '.length - text.length;
  const barWidth = Math.min(40, room);
  if (barWidth < 10) return `push${text}`.slice(0, Math.max(0, width - 1));
  const filled = total === 0 ? barWidth : Math.round((done / total) * barWidth);
  return `push [${'█'.repeat(filled)}${'░'.repeat(barWidth - filled)}]${text}`;
}

/** A bar on a terminal; plain lines otherwise (CI logs, pipes), both on stderr. */
export function progressReporter(): Progress {
  const { stderr, stdout } = cliIo();
  // The bar redraws a terminal in place: only the process's own stderr can be one (a run's collector is not).
  if (stderr === process.stderr && process.stderr.isTTY) {
    const stream = process.stderr;
    // A MultiBar of one bar, because only MultiBar can print lines (retry notes) above its bar.
    const bars = new cliProgress.MultiBar({
      stream,
      format: (_options, params, payload: { counts: Counts }) =>
        progressLine(params.value, params.total, payload.counts, stream.columns || stdout.columns || 80),
    });
    let bar: cliProgress.SingleBar | undefined;
    return {
      update: (done, total, counts) => {
        bar ??= bars.create(total, 0, { counts });
        bar.setTotal(total);
        bar.update(done, { counts });
      },
      note: (message) => bars.log(`${message}\n`),
      stop: () => bars.stop(),
    };
  }
  return {
    update: (done, total, counts) => stderr.write(`progress ${done}/${total}: ${tally(counts, ', ')}\n`),
    note: (message) => stderr.write(`${message}\n`),
    stop: () => undefined,
  };
}
