import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * What the code's own tables already say is written into the docs from them, or checked against them, so
 * the docs cannot drift: the Layers table of docs/architecture.md comes from ROOMS (UPDATE_DOCS=1 rewrites
 * it, as the error catalog's table), its tree names every room of src/, and every "docs/X.md, Section" a
 * comment cites names a heading of that document.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const ARCHITECTURE = join(ROOT, 'docs', 'architecture.md');
// A path in a variable: the module is plain JavaScript, read here without types.
const ROOMS_MODULE = join(ROOT, 'eslint', 'rooms.js');
const { ROOMS } = (await import(ROOMS_MODULE)) as { ROOMS: Record<string, [string[], string]> };

const START = '<!-- layers:start (generated from eslint/rooms.js by test/unit/docs-follow-code.test.ts) -->';
const END = '<!-- layers:end -->';

/** "every room but `cli`, `client`" where a room may import most of the others, else the list. */
function mayImport(room: string, allowed: string[]): string {
  if (allowed.length === 0) return 'nothing';
  const others = Object.keys(ROOMS).filter((other) => other !== room);
  const not = others.filter((other) => !allowed.includes(other)).sort();
  if (not.length === 0) return 'every room';
  if (not.length < allowed.length / 3) return `every room but ${not.map((name) => `\`${name}\``).join(', ')}`;
  return [...allowed].sort().map((name) => `\`${name}\``).join(', ');
}

function layersTable(): string {
  const rows = Object.entries(ROOMS).map(([room, [allowed, why]]) => `| \`${room}\` | ${mayImport(room, allowed)} | ${why.replace(/\|/g, '\\|')} |`);
  return ['| Room | May import | Why |', '|---|---|---|', ...rows].join('\n');
}

/** The names the tree block of docs/architecture.md lists at the top of src/ (two spaces in). */
function treeEntries(markdown: string): string[] {
  const section = markdown.slice(markdown.indexOf('\n## The tree\n'));
  const block = section.slice(section.indexOf('```'), section.indexOf('```', section.indexOf('```') + 3));
  return [...block.matchAll(/^ {2}([\w.-]+\/?)\s/gm)].map((m) => m[1]!.replace(/\/$/, ''));
}

function headings(markdown: string): string[] {
  let fenced = false;
  const found: string[] = [];
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.+)$/.exec(line);
    if (heading) found.push(heading[1]!.replace(/`/g, '').trim().toLowerCase());
  }
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'fixtures' ? [] : sourceFiles(path);
    return /\.(ts|mts|mjs|js)$/.test(name) ? [path] : [];
  });
}

/**
 * Each "docs/X.md, Section" of a file's comments. A comment that wraps is read as one line; the section's
 * name ends at the first parenthesis, ;, :, comma, period or quote ("docs/api.md, Import: price on request" cites Import).
 */
function citations(source: string): { document: string; section: string }[] {
  const joined = source.replace(/\n\s*(?:\*|\/\/)\s?/g, ' ');
  return [...joined.matchAll(/docs\/([a-z-]+\.md), ([A-Z][^().;:,"'`*\n]*)/g)].map((m) => ({ document: m[1]!, section: m[2]!.trim() }));
}

describe('docs/architecture.md follows the code', () => {
  test('its Layers table is ROOMS of eslint/rooms.js (UPDATE_DOCS=1 rewrites it)', () => {
    const text = readFileSync(ARCHITECTURE, 'utf8');
    const start = text.indexOf(START);
    const end = text.indexOf(END);
    expect(start, 'docs/architecture.md lacks the layers markers').toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    const expected = `${START}\n${layersTable()}\n${END}`;
    const actual = text.slice(start, end + END.length);
    if (process.env.UPDATE_DOCS === '1' && actual !== expected) writeFileSync(ARCHITECTURE, text.replace(actual, expected));
    else expect(actual).toBe(expected);
  });

  test('its tree names every room and loose file of src/, and nothing that is not there', () => {
    const listed = treeEntries(readFileSync(ARCHITECTURE, 'utf8'));
    const present = readdirSync(join(ROOT, 'src')).filter((name) => !name.endsWith('.md'));
    expect({ missing: present.filter((name) => !listed.includes(name)), gone: listed.filter((name) => !present.includes(name)) })
      .toEqual({ missing: [], gone: [] });
  });

  test('every room of the tree is a room of ROOMS', () => {
    const rooms = treeEntries(readFileSync(ARCHITECTURE, 'utf8')).filter((name) => !name.endsWith('.ts'));
    expect(rooms.filter((room) => !(room in ROOMS))).toEqual([]);
  });
});

describe('comments cite sections that exist', () => {
  test('every "docs/X.md, Section" in src/, test/, bench/, scripts/ and eslint/ names a heading of that document', () => {
    const known = new Map<string, string[]>();
    const broken: string[] = [];
    // This file's own examples are not citations.
    const files = ['src', 'test', 'bench', 'scripts', 'eslint'].flatMap((dir) => sourceFiles(join(ROOT, dir))).filter((file) => file !== import.meta.filename);
    for (const file of files) {
      for (const { document, section } of citations(readFileSync(file, 'utf8'))) {
        if (!known.has(document)) {
          let text = '';
          try { text = readFileSync(join(ROOT, 'docs', document), 'utf8'); } catch { /* reported below as a missing document */ }
          known.set(document, headings(text));
        }
        const wanted = section.toLowerCase();
        // A heading may go on past the words cited ("Slugs and fingerprints" for "Slugs and fingerprints (version 2)").
        if (!known.get(document)!.some((heading) => heading.startsWith(wanted))) broken.push(`${relative(ROOT, file)}: docs/${document}, ${section}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('no file cites the unpublished decisions by number: a "§" follows an RFC (the repository\'s own docs are cited by heading)', () => {
    const stray: string[] = [];
    const files = ['src', 'test', 'bench', 'scripts', 'eslint'].flatMap((dir) => sourceFiles(join(ROOT, dir))).filter((file) => file !== import.meta.filename);
    for (const file of files) {
      const joined = readFileSync(file, 'utf8').replace(/\n\s*(?:\*|\/\/)\s?/g, ' ');
      for (const m of joined.matchAll(/§\s?\d+/g)) {
        // "RFC 9110 §13.1.2", and later in a file that names its RFC, "(§3.3.5 form 2)".
        if (!/RFC \d+/.test(joined.slice(0, m.index))) stray.push(`${relative(ROOT, file)}: …${joined.slice(Math.max(0, m.index - 30), m.index)}${m[0]}`);
      }
      if (/decisions(\.md)?\s*§/i.test(joined)) stray.push(`${relative(ROOT, file)}: cites decisions`);
    }
    expect(stray).toEqual([]);
  });

  test('a citation is read to the end of its section name, across a wrapped comment', () => {
    expect(citations('// see (docs/api.md, Import: price on request) and\n * (docs/deploy.md, Sign-in\n * limits). "docs/api.md, Service unavailable (503)"'))
      .toEqual([{ document: 'api.md', section: 'Import' }, { document: 'deploy.md', section: 'Sign-in limits' }, { document: 'api.md', section: 'Service unavailable' }]);
  });
});
