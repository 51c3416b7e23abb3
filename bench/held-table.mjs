#!/usr/bin/env node
// What a table held between the console Import's steps costs in heap (src/import/packed-rows.ts,
// src/console/held-imports.ts CELL_BUDGET): the 19 MB CSV of bench/abuse.mjs's Connects (380,000 rows
// of two short cells) and a JSON file of 20,000 items of ten keys, read by readTable and held as the
// readers hold it, then also as objects ({ label, cells } with a string per cell, how the readers held
// rows before), each measured after a full GC in a process of its own (the strings that made a file
// would otherwise still be counted). Also the longest turn of the event loop while it is read, as the main
// thread's CPU time (on a loaded machine the wall-clock pause is mostly the process waiting for a core).
//
//   node bench/held-table.mjs [--dist DIR]      (needs `npm run build`; --dist another checkout's dist/ to compare)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const self = fileURLToPath(import.meta.url);
const { values, positionals } = parseArgs({ options: { dist: { type: 'string', default: join(self, '..', '..', 'dist') } }, allowPositionals: true });

if (positionals[0] === 'measure') {
  const { readTable } = await import(pathToFileURL(join(resolve(values.dist), 'import', 'table.js')).href);
  const heap = () => {
    globalThis.gc();
    globalThis.gc();
    return process.memoryUsage().heapUsed;
  };
  const bytes = readFileSync(positionals[1]);
  const start = heap();
  const delay = monitorEventLoopDelay({ resolution: 5 });
  const cpu = () => {
    const used = process.threadCpuUsage();
    return (used.user + used.system) / 1000;
  };
  let longest = 0;
  let last = cpu();
  let reading = true;
  const turn = () => {
    const now = cpu();
    longest = Math.max(longest, now - last);
    last = now;
    if (reading) setImmediate(turn);
  };
  setImmediate(turn);
  delay.enable();
  const table = await readTable(bytes, { name: positionals[1] });
  delay.disable();
  reading = false;
  const held = heap() - start;
  const objects = table.rows.slice();
  const asObjects = heap() - start - held;
  const cells = table.rows.length * (table.columns.length + 1);
  process.stdout.write(JSON.stringify({ rows: table.rows.length, columns: table.columns.length, held, asObjects: objects.length > 0 ? asObjects : 0, cells, pause: delay.max / 1e6, turn: longest }));
} else {
  const dir = mkdtempSync(join(tmpdir(), 'held-table-'));
  try {
    const csv = join(dir, 'abuse.csv');
    writeFileSync(csv, `title,external_id\n${Array.from({ length: 380_000 }, (_, i) => `Connect work ${String(i).padStart(12, '0')} ${'x'.repeat(12)},C-${String(i).padStart(8, '0')}`).join('\n')}\n`.slice(0, 19_000_000).replace(/\n[^\n]*$/, '\n'));
    const json = join(dir, 'items.json');
    writeFileSync(json, JSON.stringify(Array.from({ length: 20_000 }, (_, i) => Object.fromEntries(Array.from({ length: 10 }, (_, k) => [`key_${k}`, k % 3 === 0 ? i * k : `value ${i} ${k}`])))));
    const lines = [csv, json].map((file) => {
      const m = JSON.parse(execFileSync(process.execPath, ['--expose-gc', self, 'measure', file, '--dist', values.dist], { encoding: 'utf8' }));
      return {
        file: `${file.split('/').at(-1)} (${(readFileSync(file).length / 1e6).toFixed(1)} MB, ${m.rows.toLocaleString('en')} rows × ${m.columns})`,
        'held, MB': (m.held / 1e6).toFixed(1),
        'held, bytes per cell': Math.round(m.held / m.cells),
        'its rows as objects, MB': (m.asObjects / 1e6).toFixed(1),
        'longest turn while read, CPU ms': m.turn.toFixed(1),
        'longest event-loop delay, ms': m.pause.toFixed(1),
      };
    });
    console.log('cells counted as held-imports.ts counts them: rows × (columns + 1)');
    console.table(lines);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
