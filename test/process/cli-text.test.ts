import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createEntity, listEntities } from '../../src/store/entities.js';
import { escapeControlCharacters, hasControlCharacters } from '../../src/domain/text.js';
import { freshDatabase, type FreshDatabase } from '../helpers.js';
import { cliOn } from '../support/cli.js';

let database: FreshDatabase;
beforeAll(async () => {
  database = await freshDatabase();
  const handle = connect(database.url);
  await migrateToLatest(handle);
  await createEntity(handle.db, { type: 'gallery', name: 'First Gallery' });
  await handle.close();
});
afterAll(() => database.drop());

const cli = (...args: string[]) => cliOn(database.url, args);

const names = async () => {
  const handle = connect(database.url);
  try {
    return (await listEntities(handle.db)).map((e) => e.name);
  } finally {
    await handle.close();
  }
};

describe('text the operator gives and the CLI prints', () => {
  test.each([
    ['a line feed', ['entity', 'create', '--type', 'gallery', '--name', 'Evil\n2\tgallery\tforged']],
    ['a carriage return', ['entity', 'create', '--type', 'gallery', '--name', 'Evil\rGallery']],
    ['a terminal escape', ['entity', 'create', '--type', 'gallery', '--name', 'Red \u001b[31mGallery']],
    ['a C1 control (NEL)', ['entity', 'create', '--type', 'artist', '--name', 'Next\u0085Line']],
    ['a bell in the city', ['entity', 'create', '--type', 'gallery', '--name', 'Fine Gallery', '--city', 'Ber\u0007lin']],
    ['a line separator on update', ['entity', 'update', '1', '--name', 'Line\u2028Separator']],
  ])('a name or city with %s is refused with exit 2, one line on stderr naming the option, nothing stored', async (_what, args) => {
    const before = await names();
    const result = await cli(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/--(name|city) must not contain control characters/);
    expect(hasControlCharacters(result.stderr.trimEnd())).toBe(false);
    expect(await names()).toEqual(before);
  });

  test('a name with control characters stored before this rule is listed on one line, escaped', async () => {
    const handle = connect(database.url);
    const forged = await createEntity(handle.db, { type: 'gallery', name: 'Old\n99\tartist\tforged-line\u001b[2J' });
    await handle.close();
    const result = await cli('entity', 'list');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    const line = lines.find((l) => l.startsWith(`${forged.id}\t`));
    expect(line).toBe(`${forged.id}\tgallery\t${forged.slug}\tOld\\n99\\tartist\\tforged-line\\u001b[2J`);
    expect(lines.some((l) => l.startsWith('99\t'))).toBe(false);
  });

  test('escaping writes each control character as a visible escape and leaves other text alone', () => {
    expect(escapeControlCharacters('Müller & Söhne — 草間彌生')).toBe('Müller & Söhne — 草間彌生');
    expect(escapeControlCharacters('a\nb\rc\td\u0000e\u007ff\u009fg\u2029')).toBe('a\\nb\\rc\\td\\u0000e\\u007ff\\u009fg\\u2029');
  });
});
