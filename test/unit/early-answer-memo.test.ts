import { describe, expect, test } from 'vitest';
import { EarlyAnswerMemo, type EarlyRoute } from '../../src/http/early/memo.js';

/** The memo of the early answers (src/http/early/memo.ts): bounded by bytes, the pairs in use kept. */
const route: EarlyRoute = { pattern: '/v1/artworks/:id', scope: null, largeAnswer: false, series: {} };
const HASH = 'h'.repeat(43);
// One pair of these names counts 3 + 3 + 14 + 43 + 3 + 128 = 194 bytes: room for two.
const memo = () => new EarlyAnswerMemo(400);
const remembered = (m: EarlyAnswerMemo, url: string) => {
  const pairs = m.pairsOf('200', 'GET', url);
  return pairs === undefined ? undefined : m.get(pairs, HASH);
};

describe('the early answers\' memo', () => {
  test('past its bytes, the pair remembered first and not used since goes first', () => {
    const m = memo();
    m.remember('200', 'GET', '/v1/artworks/1', HASH, { route, entityId: 1 });
    m.remember('200', 'GET', '/v1/artworks/2', HASH, { route, entityId: 1 });
    m.remember('200', 'GET', '/v1/artworks/3', HASH, { route, entityId: 1 });
    expect(remembered(m, '/v1/artworks/1')).toBeUndefined();
    expect(remembered(m, '/v1/artworks/2')).toEqual({ route, entityId: 1 });
    expect(remembered(m, '/v1/artworks/3')).toEqual({ route, entityId: 1 });
    expect(m.bytes()).toBeLessThanOrEqual(400);
  });

  test('a pair used since it was remembered stays while one not used goes, and the bound holds however often pairs are used', () => {
    const m = memo();
    m.remember('200', 'GET', '/v1/artworks/1', HASH, { route, entityId: 1 });
    m.remember('200', 'GET', '/v1/artworks/2', HASH, { route, entityId: 1 });
    expect(remembered(m, '/v1/artworks/1')).toBeDefined();
    m.remember('200', 'GET', '/v1/artworks/3', HASH, { route, entityId: 1 });
    expect(remembered(m, '/v1/artworks/2')).toBeUndefined();
    expect(remembered(m, '/v1/artworks/1')).toBeDefined();
    expect(remembered(m, '/v1/artworks/3')).toBeDefined();
    for (let i = 4; i < 50; i++) {
      remembered(m, '/v1/artworks/1');
      m.remember('200', 'GET', `/v1/artworks/${i}`, HASH, { route, entityId: 1 });
      expect(m.bytes()).toBeLessThanOrEqual(400);
      expect(remembered(m, `/v1/artworks/${i}`)).toBeDefined();
    }
  });

  test('a pair just remembered is kept even when every other was used since', () => {
    const m = memo();
    m.remember('200', 'GET', '/v1/artworks/1', HASH, { route, entityId: 1 });
    m.remember('200', 'GET', '/v1/artworks/2', HASH, { route, entityId: 1 });
    remembered(m, '/v1/artworks/1');
    remembered(m, '/v1/artworks/2');
    m.remember('200', 'GET', '/v1/artworks/3', HASH, { route, entityId: 1 });
    expect(remembered(m, '/v1/artworks/3')).toBeDefined();
    expect([remembered(m, '/v1/artworks/1'), remembered(m, '/v1/artworks/2')].filter(Boolean)).toHaveLength(1);
  });
});
