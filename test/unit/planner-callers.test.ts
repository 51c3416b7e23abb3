import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * The import planner's callers take its problems as structures (docs/architecture.md, The import
 * planner): none reads a line number out of a row's label, splits a message into its fields, or strips
 * another caller's advice from a message.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const CALLERS = ['src/cli/push.ts', 'src/apply/index.ts', 'src/feeds/run.ts', 'src/feeds/preview.ts', 'src/console/pages/import.ts', 'src/console/pages/feeds.ts'];
const PARSING = [
  { what: 'a number read out of a label', pattern: /\/\\d\+\/\.exec\(/ },
  { what: 'a message split into fields', pattern: /\.split\(\/; / },
  { what: 'advice stripped from a message', pattern: /\.replace\(\/ \\\(map / },
];

describe('the planner\'s callers', () => {
  test('parse no message for its line, column or advice', () => {
    const found = CALLERS.flatMap((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      return PARSING.filter(({ pattern }) => pattern.test(text)).map(({ what }) => `${file}: ${what}`);
    });
    expect(found).toEqual([]);
  });
});
