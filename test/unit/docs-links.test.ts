import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** The README and every document under docs/. */
const DOCUMENTS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2, … */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** The relative links of a markdown text outside code blocks: [text](target). */
function links(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/.test(target));
}

describe('links between the documents', () => {
  test.each(DOCUMENTS)('every relative link of %s names a file, and a heading of it, that exist', (document) => {
    const broken: string[] = [];
    const own = readFileSync(join(ROOT, document), 'utf8');
    for (const target of links(own)) {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path === '' ? join(ROOT, document) : join(ROOT, dirname(document), decodeURIComponent(path));
      if (!existsSync(file)) {
        broken.push(`${target}: no file ${relative(ROOT, file)}`);
        continue;
      }
      if (anchor !== undefined && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor)) {
        broken.push(`${target}: no heading #${anchor} in ${relative(ROOT, file)}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test.each(DOCUMENTS)('every file of the repository that %s names in code spans exists', (document) => {
    const named = [...readFileSync(join(ROOT, document), 'utf8').matchAll(/`((?:src|test|bench|scripts|deploy|examples)\/[\w@./-]+\.(?:ts|mjs|js|md|conf|service))`/g)].map((m) => m[1]!);
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });

  test('the anchor of a heading is what GitHub makes of it', () => {
    expect([...anchors('# A\n## Service unavailable (503)\n## Images: where the derivatives live\n```\n# not a heading\n```\n## Links\n## Links\n')])
      .toEqual(['a', 'service-unavailable-503', 'images-where-the-derivatives-live', 'links', 'links-1']);
  });
});

describe('docs/operations.md, Configuration', () => {
  test('names every environment variable the service reads', () => {
    const config = readFileSync(join(ROOT, 'src', 'config.ts'), 'utf8');
    const read = new Set([
      ...[...config.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!),
      ...[...config.matchAll(/\(env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]!),
      ...['ART_CATALOG_URL', 'ART_CATALOG_KEY', 'ART_CATALOG_CACHE_DIR'],
    ]);
    expect(read.size).toBeGreaterThan(30);
    const operations = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    const table = operations.slice(operations.indexOf('\n## Configuration\n'), operations.indexOf('\n## ', operations.indexOf('\n## Configuration\n') + 5));
    // A setting added to src/config.ts gets its row in that table: the one list of every setting.
    expect([...read].filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});
