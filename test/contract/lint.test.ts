import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, test } from 'vitest';
import { DIALECT } from '../helpers.js';

/** The linter of `npm test` (eslint.config.js) must catch what the fast paths rely on it to catch. */

const ROOT = join(import.meta.dirname, '..', '..');
// eslint.config.js is plain JavaScript without types: its table of rooms, read as what it is.
const CONFIG: string = join(ROOT, 'eslint.config.js');
const { ROOMS } = (await import(CONFIG)) as { ROOMS: Record<string, [string[], string]> };
const ruleIds = (results: ESLint.LintResult[]) => results.flatMap((r) => r.messages.map((m) => `${m.line}:${m.ruleId ?? m.message}`));

// Linting is the same on either database: one pass.
describe.skipIf(DIALECT !== 'sqlite')('the project\'s lint rules', () => {
  // The fixtures are ignored by `eslint .`; here they are linted on purpose, with the types of their own small
  // project (test/lint/fixtures/tsconfig.json: the fixtures and what they import), not the whole tree's.
  const eslint = new ESLint({ cwd: ROOT, ignore: false });
  // The layering is a rule on import paths alone: the project's config with only that rule, and no types, which
  // the parser would otherwise build for the whole tree (3.6 s of CPU for the first file).
  const layering = new ESLint({ cwd: ROOT, ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports', overrideConfig: { languageOptions: { parserOptions: { projectService: false } } } });

  test('a promise that is neither awaited nor handled is an error', async () => {
    const results = await eslint.lintFiles([join(ROOT, 'test/lint/fixtures/floating-promise.ts')]);
    expect(ruleIds(results)).toEqual(['6:@typescript-eslint/no-floating-promises']);
  }, 120_000);

  test('a work created and not yielded is an error, also behind void; yield* is fine', async () => {
    const results = await eslint.lintFiles([join(ROOT, 'test/lint/fixtures/unyielded-work.ts')]);
    expect(ruleIds(results)).toEqual(['8:local/no-unyielded-work', '9:local/no-unyielded-work']);
  }, 120_000);

  test('the contract (src/schemas) may not import the domain, the store or the HTTP layer', async () => {
    const results = await layering.lintText(
      "import { ApiError } from '../domain/errors.js';\nimport { listEntities } from '../store/entities.js';\nexport const used = [ApiError, listEntities];\n",
      { filePath: join(ROOT, 'src/schemas/common.ts') },
    );
    expect(ruleIds(results).filter((id) => id.includes('no-restricted-imports'))).toEqual(['1:no-restricted-imports', '2:no-restricted-imports']);
  }, 120_000);

  const restricted = async (source: string, file: string) =>
    ruleIds(await layering.lintText(source, { filePath: join(ROOT, file) })).filter((id) => id.includes('no-restricted-imports'));

  test('no room below the API\'s app imports src/http, at any depth of its folder; src/http-common is theirs to share', async () => {
    for (const file of ['src/web/html.ts', 'src/console/guard.ts', 'src/console/pages/session.ts', 'src/images/store/file.ts', 'src/store/artworks.ts', 'src/db/sqlite/reader.ts', 'src/domain/errors.ts', 'src/webhooks/deliver.ts', 'src/feeds/run.ts', 'src/apply/index.ts', 'src/http-common/client-address.ts']) {
      const up = '../'.repeat(file.split('/').length - 2);
      expect(await restricted(`import { buildApp } from '${up}http/app.js';\nexport const used = buildApp;\n`, file), file).toEqual(['1:no-restricted-imports']);
    }
    expect(await restricted("import { limitedClient } from '../../http-common/client-address.js';\nimport { html } from '../../web/html.js';\nexport const used = [limitedClient, html];\n", 'src/console/pages/session.ts')).toEqual([]);
  }, 120_000);

  test('every folder of src/ has its list of rooms it may import', () => {
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(Object.keys(ROOMS).sort()).toEqual(folders.sort());
  });
});
