import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { artworkFingerprint } from '../../src/domain/fingerprint.js';
import { generateKey, hashKey, keyPrefix, withoutShownSecret } from '../../src/domain/keys.js';
import { eventSlug, slugify } from '../../src/domain/slug.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('slugify (docs/api.md, Slugs and fingerprints)', () => {
  test('a Latin name becomes lower-case words joined by dashes', () => {
    expect(slugify('Gerhard Richter')).toBe('gerhard-richter');
  });

  test('accents on Latin letters are removed and punctuation runs become one dash', () => {
    expect(slugify('Müller & Söhne')).toBe('muller-sohne');
  });

  test('ß is transliterated to ss', () => {
    expect(slugify('Straße')).toBe('strasse');
  });

  test('Ø is transliterated to o', () => {
    expect(slugify('Ørsted')).toBe('orsted');
  });

  test('the other listed letters are transliterated (æ, œ, đ, ł, þ, ð)', () => {
    expect(slugify('Æsop Œuvre Đorđe Łódź Þór Ðan')).toBe('aesop-oeuvre-dorde-lodz-thor-dan');
  });

  test('Chinese characters are kept as they are', () => {
    expect(slugify('草間彌生')).toBe('草間彌生');
  });

  test('Hangul is kept as it is', () => {
    expect(slugify('김환기')).toBe('김환기');
  });

  test('a Devanagari name keeps its vowel signs and virama', () => {
    // रवि वर्मा: र व ि (U+093F vowel sign I) · व र ् (U+094D virama) म ा (U+093E vowel sign AA)
    const slug = slugify('रवि वर्मा');
    expect(slug).toBe('रवि-वर्मा');
    expect(slug).toContain('\u093F');
    expect(slug).toContain('\u093E');
    expect(slug).toContain('\u094D');
  });

  test('Japanese kana with voicing marks keep them (ガ stays ガ, not カ)', () => {
    expect(slugify('ガラス')).toBe('ガラス');
    expect(slugify('ガ')).toBe('ガ');
    expect(slugify('ガ')).not.toBe('カ');
    // The decomposed form (カ + combining dakuten) gives the same composed slug.
    expect(slugify('\u30AB\u3099')).toBe('ガ');
  });

  test('leading and trailing separators are trimmed and inner runs collapse to one dash', () => {
    expect(slugify('  --Hello,  World!--  ')).toBe('hello-world');
  });

  test('digits are kept', () => {
    expect(slugify('Untitled No. 7 (1990)')).toBe('untitled-no-7-1990');
  });

  test('an empty input gives an empty slug', () => {
    expect(slugify('')).toBe('');
  });

  test('version 2: an input without letters or digits gets x and 12 hex digits of its SHA-256, so symbol-only titles stay apart', () => {
    expect(slugify('!!!')).toBe(`x${sha256('!!!').slice(0, 12)}`);
    expect(slugify('  ???  ')).toBe(`x${sha256('???').slice(0, 12)}`);
    expect(slugify('…')).not.toBe(slugify('???'));
    expect(slugify('😀')).toMatch(/^x[0-9a-f]{12}$/);
    expect(slugify('   ')).toBe('');
  });

  test('an event slug is the entity slug and the title slug; a symbol-only title no longer takes the entity slug', () => {
    expect(eventSlug('demo-gallery', 'Spring Opening!')).toBe('demo-gallery-spring-opening');
    expect(eventSlug('demo-gallery', 'Spring Opening!')).toBe(slugify('demo-gallery Spring Opening!'));
    expect(eventSlug('demo-gallery', '???')).toBe(`demo-gallery-x${sha256('???').slice(0, 12)}`);
    expect(eventSlug('demo-gallery', '???')).not.toBe(eventSlug('demo-gallery', '!!!'));
  });
});

describe('artworkFingerprint (docs/api.md, Slugs and fingerprints)', () => {
  test('the fingerprint is the SHA-256 hex of slug(artist)|slug(title)|year', () => {
    const fingerprint = artworkFingerprint({ title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990 });
    expect(fingerprint).toBe(sha256('gerhard-richter|abstract-painting|1990'));
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  test('an absent artist and year are empty between the separators', () => {
    expect(artworkFingerprint({ title: 'Abstract Painting' })).toBe(sha256('|abstract-painting|'));
    expect(artworkFingerprint({ title: 'Abstract Painting', artist_name: null, creation_year: null })).toBe(sha256('|abstract-painting|'));
  });

  test('titles that normalize to the same slug give the same fingerprint', () => {
    expect(artworkFingerprint({ title: 'abstract painting!', artist_name: 'GERHARD  RICHTER', creation_year: 1990 }))
      .toBe(artworkFingerprint({ title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990 }));
  });

  test('a different year gives a different fingerprint', () => {
    expect(artworkFingerprint({ title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1991 }))
      .not.toBe(artworkFingerprint({ title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990 }));
  });
});

describe('API keys (docs/api.md, Authentication)', () => {
  test('a generated key is ak_live_ followed by 32 alphanumeric characters', () => {
    for (let i = 0; i < 50; i++) expect(generateKey()).toMatch(/^ak_live_[A-Za-z0-9]{32}$/);
  });

  test('generated keys are not repeated', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateKey()));
    expect(keys.size).toBe(200);
  });

  test('the prefix of a key is its first 16 characters', () => {
    const key = generateKey();
    const prefix = keyPrefix(key);
    expect(prefix).toHaveLength(16);
    expect(prefix).toBe(key.slice(0, 16));
    expect(prefix.startsWith('ak_live_')).toBe(true);
  });

  test('hashKey is the lower-case SHA-256 hex of the key', () => {
    const key = generateKey();
    expect(hashKey(key)).toBe(sha256(key));
    expect(hashKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashKey(key)).not.toContain(key);
  });
});

describe('an answer kept for an idempotent replay', () => {
  test('holds no secret it showed: a top-level secret or whole key is null with secret_shown false; other bodies are kept byte for byte', () => {
    const endpoint = JSON.stringify({ id: 1, url: 'https://a.example/h', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwabcdefghijk=' });
    expect(JSON.parse(withoutShownSecret(endpoint))).toEqual({ id: 1, url: 'https://a.example/h', secret: null, secret_shown: false });
    const key = JSON.stringify({ prefix: 'ak_live_abcdefgh', key: `ak_live_${'a1B2'.repeat(8)}` });
    expect(JSON.parse(withoutShownSecret(key))).toEqual({ prefix: 'ak_live_abcdefgh', key: null, secret_shown: false });
    for (const body of ['{"id":1,"title":"A \\"secret\\" garden"}', '{"key":"not a key"}', '[{"secret":"x"}]', 'not json "secret"', '{"secret":null}']) {
      expect(withoutShownSecret(body)).toBe(body);
    }
  });
});
