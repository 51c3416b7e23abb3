import { describe, expect, test } from 'vitest';
import { parseId } from '../../src/domain/ids.js';
import { ifNoneMatch, ifNoneMatchMatches } from '../../src/http-common/if-none-match.js';

describe('parseId: the one reading of a record id (API, public pages, console, CLI)', () => {
  test('a positive integer up to 2^31 - 1 is an id; anything else is none', () => {
    expect(parseId('1')).toBe(1);
    expect(parseId('2147483647')).toBe(2_147_483_647);
    for (const raw of ['2147483648', '9999999999', '0', '01', '-1', '1.0', '1e3', ' 1', '', 'abc', '12345678901', undefined]) {
      expect(parseId(raw), String(raw)).toBeUndefined();
    }
  });
});

describe('ifNoneMatch: the one reading of If-None-Match (API, public pages, images)', () => {
  const tag = '"abc"';
  test('a list of tags, weak or strong, matches by tag', () => {
    expect(ifNoneMatch(tag, tag)).toBe('etag');
    expect(ifNoneMatch(`"x", W/${tag}`, tag)).toBe('etag');
    expect(ifNoneMatch(' "x" ,"abc" ', tag)).toBe('etag');
    expect(ifNoneMatch('"x"', tag)).toBeUndefined();
    expect(ifNoneMatch(undefined, tag)).toBeUndefined();
    expect(ifNoneMatch('abc', tag)).toBeUndefined();
  });

  test('`*` alone names any representation; `*` inside a list is no `*`', () => {
    expect(ifNoneMatch(' * ', tag)).toBe('any');
    expect(ifNoneMatch('"x", *', tag)).toBeUndefined();
    expect(ifNoneMatchMatches('*', tag, true)).toBe(true);
    expect(ifNoneMatchMatches('*', tag, false)).toBe(false);
  });
});
