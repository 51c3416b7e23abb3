import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, test } from 'vitest';
import { DIALECT } from '../helpers.js';

/** The linter of `npm test` (eslint.config.js) must catch what the fast paths rely on it to catch. */

const ROOT = join(import.meta.dirname, '..', '..');
const ruleIds = (results: ESLint.LintResult[]) => results.flatMap((r) => r.messages.map((m) => `${m.line}:${m.ruleId ?? m.message}`));

// Linting is the same on either database: one pass.
describe.skipIf(DIALECT !== 'sqlite')('the project\'s lint rules', () => {
  // The fixtures are ignored by `eslint .`; here they are linted on purpose.
  const eslint = new ESLint({ cwd: ROOT, ignore: false });

  test('a promise that is neither awaited nor handled is an error', async () => {
    const results = await eslint.lintFiles([join(ROOT, 'test/lint/fixtures/floating-promise.ts')]);
    expect(ruleIds(results)).toEqual(['6:@typescript-eslint/no-floating-promises']);
  }, 120_000);

  test('a work created and not yielded is an error, also behind void; yield* is fine', async () => {
    const results = await eslint.lintFiles([join(ROOT, 'test/lint/fixtures/unyielded-work.ts')]);
    expect(ruleIds(results)).toEqual(['8:local/no-unyielded-work', '9:local/no-unyielded-work']);
  }, 120_000);

  test('the contract (src/schemas) may not import the domain, the store or the HTTP layer', async () => {
    const results = await eslint.lintText(
      "import { ApiError } from '../domain/errors.js';\nimport { listEntities } from '../store/entities.js';\nexport const used = [ApiError, listEntities];\n",
      { filePath: join(ROOT, 'src/schemas/common.ts') },
    );
    expect(ruleIds(results).filter((id) => id.includes('no-restricted-imports'))).toEqual(['1:no-restricted-imports', '2:no-restricted-imports']);
  }, 120_000);
});
