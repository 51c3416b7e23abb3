import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { importCycles } from '../../scripts/import-cycles.mjs';

const ROOT = join(import.meta.dirname, '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'import-cycles-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A source tree of the given files and contents, under a fresh folder. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(scratch, 'tree-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

describe('scripts/import-cycles.mjs', () => {
  test('finds a circle of plain, type-only, re-exported and dynamic imports, and names its files', () => {
    const dir = tree({
      'a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'b.ts': "import type { C } from './c/index.js';\nexport const b = 1; export type B = C;\n",
      'c/index.ts': "export * from '../d.js';\n",
      'd.ts': "export type C = number;\nexport const load = () => import('./a.js');\n",
      'e.ts': "import { a } from './a.js';\nexport const e = a;\n",
    });
    const found = importCycles(dir, { base: dir });
    expect(found).toEqual([{ circle: ['a.ts', 'b.ts', 'c/index.ts', 'd.ts', 'a.ts'], files: ['a.ts', 'b.ts', 'c/index.ts', 'd.ts'] }]);
  });

  test('finds a file that imports itself, and nothing in a tree without circles', () => {
    expect(importCycles(tree({ 'a.ts': "import './a.js';\n" }), { base: scratch })).toHaveLength(1);
    const dir = tree({ 'a.ts': "import { b } from './b.js';\nimport 'node:fs';\nexport const a = b;\n", 'b.ts': 'export const b = 1;\n', 'c.ts': "import { a } from './a.js';\nimport { b } from './b.js';\nexport const c = a + b;\n" });
    expect(importCycles(dir, { base: dir })).toEqual([]);
  });

  test('finds circles between top-level folders that no file-level circle shows', () => {
    const dir = tree({
      'web/page.ts': "import { limit } from '../http/limit.js';\nexport const page = limit;\n",
      'http/limit.ts': 'export const limit = 1;\n',
      'http/app.ts': "import { page } from '../web/page.js';\nexport const app = page;\n",
    });
    expect(importCycles(dir, { base: dir })).toEqual([]);
    expect(importCycles(dir, { base: dir, folders: true })).toEqual([{ circle: ['http', 'web', 'http'], files: ['http', 'web'] }]);
  });
});

describe('src/', () => {
  // None is left (docs/architecture.md, Layers): a new one fails here, naming its files.
  test('holds no import circle between files', () => {
    expect(importCycles(join(ROOT, 'src'), { base: ROOT })).toEqual([]);
  });

  test('holds no import circle between its folders', () => {
    expect(importCycles(join(ROOT, 'src'), { base: ROOT, folders: true })).toEqual([]);
  });
});
