import { expect, test } from 'vitest';
import { sourceInWords } from '../../src/console/changes.js';

/** Who wrote a change or deleted a record, as the console says it (docs/console.md, Trash). */
test('a changelog source reads in the gallery\'s words', () => {
  const emails = new Map([[17, 'anna@galerie.example']]);
  expect(sourceInWords('console:17', emails)).toBe('anna@galerie.example');
  expect(sourceInWords('console:18', emails)).toBe('console user #18');
  expect(sourceInWords('console:17')).toBe('console user #17');
  expect(sourceInWords('api:ak_live_3fK9xQ2b')).toBe('API key ak_live_3fK9xQ2b…');
  expect(sourceInWords('feed:3')).toBe('feed 3');
  expect(sourceInWords('undo:12')).toBe('undo of run 12');
  expect(sourceInWords('import')).toBe('import');
  expect(sourceInWords('import:5')).toBe('import');
  expect(sourceInWords('something else')).toBe('something else');
});
