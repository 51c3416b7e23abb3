import { afterEach, describe, expect, test, vi } from 'vitest';

// The public pages' dates and country names, and when their ICU formatters are made: not when the module
// loads (a formatter maps ICU's locale data, ~6.5 MB of the node binary's pages, which a process that
// renders no page never needs), but when the public routes are registered, before the server listens:
// the first of each kind costs 7-30 ms on the event loop, which the first visitor's page paid
// (docs/performance.md, Memory; docs/performance.md, Stall scenario).
describe('public page formatting', () => {
  afterEach(() => vi.restoreAllMocks());

  test('loading the module makes no ICU formatter; prepareFormatters makes each once, and pages reuse them', async () => {
    // A fresh copy of the module: in a worker that ran other files before (isolate false) it is loaded already.
    vi.resetModules();
    const dates = vi.spyOn(Intl, 'DateTimeFormat');
    const regions = vi.spyOn(Intl, 'DisplayNames');
    const { prepareFormatters, formatDates, countryName, formatPlace } = await import('../../src/web/format.js');
    expect(dates).not.toHaveBeenCalled();
    expect(regions).not.toHaveBeenCalled();
    prepareFormatters();
    expect(dates).toHaveBeenCalledTimes(1);
    expect(regions).toHaveBeenCalledTimes(1);

    expect(formatDates('2026-11-27', '2026-12-03')).toBe('27 November 2026 – 3 December 2026');
    expect(formatDates('2026-11-27', '2026-11-27')).toBe('27 November 2026');
    expect(formatDates('2024-02-29', null)).toBe('29 February 2024');
    expect(formatDates(null, null)).toBe('Date to be announced');
    expect(countryName('DE')).toBe('Germany');
    expect(formatPlace('Lyon', 'FR')).toBe('Lyon, France');
    prepareFormatters();
    expect(dates).toHaveBeenCalledTimes(1);
    expect(regions).toHaveBeenCalledTimes(1);
  });

  test('the public routes make the formatters when the app is built, before it listens', async () => {
    vi.resetModules();
    const dates = vi.spyOn(Intl, 'DateTimeFormat');
    const { startApp } = await import('../helpers.js');
    expect(dates).not.toHaveBeenCalled();
    const t = await startApp();
    try {
      expect(dates).toHaveBeenCalledTimes(1);
      const home = await t.app.inject({ url: '/' });
      expect(home.statusCode).toBe(200);
      expect(dates).toHaveBeenCalledTimes(1);
    } finally {
      await t.close();
    }
  });

  test('prices: one formatter per currency, made once; a code ICU does not know is written after the number', async () => {
    const numbers = vi.spyOn(Intl, 'NumberFormat');
    const { formatPrice } = await import('../../src/web/format.js');
    expect(formatPrice(12500, 'EUR')).toBe('€12,500');
    expect(formatPrice(900, 'EUR')).toBe('€900');
    expect(formatPrice(40, 'USD')).toBe('$40');
    // The euro's formatter was made by prepareFormatters (the tests above): only the dollar's is new.
    expect(numbers).toHaveBeenCalledTimes(1);
    expect(formatPrice(1500, 'ZZZZ')).toBe('1,500 ZZZZ');
    expect(formatPrice(1500, 'ZZZZ')).toBe('1,500 ZZZZ');
    expect(numbers).toHaveBeenCalledTimes(2);
    expect(formatPrice(1500, null)).toBe('1,500');
    expect(formatPrice(null, 'EUR')).toBeNull();
  });

  test('a code ICU cannot name is shown as it was stored', async () => {
    const { countryName } = await import('../../src/web/format.js');
    expect(countryName('not a region')).toBe('not a region');
    expect(countryName(null)).toBeNull();
  });
});

// Meta descriptions and the profile's JSON-LD event summaries: cut at a word from a bounded window of the
// text (a 10 KB description flattened whole was most of a profile page's first build), with the same
// result as flattening the whole text.
describe('summary', () => {
  /** The whole text flattened, then cut: what summary must equal. */
  function wholeSummary(text: string, max = 200): string | undefined {
    const flat = text.replace(/\s+/g, ' ').trim();
    if (!flat) return undefined;
    if (flat.length <= max) return flat;
    let cut = flat.slice(0, max - 1);
    const space = cut.lastIndexOf(' ');
    if (space > max / 2) cut = cut.slice(0, space);
    else if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
    return `${cut}…`;
  }

  test('short texts are flattened; long ones are cut at a word with an ellipsis', async () => {
    const { summary } = await import('../../src/web/html.js');
    expect(summary(null)).toBeUndefined();
    expect(summary('  \n\t ')).toBeUndefined();
    expect(summary(' Licht\n\nund   Raum ')).toBe('Licht und Raum');
    const long = 'Ein Text über Farbe, Licht und Raum. '.repeat(300);
    const cut = summary(long)!;
    expect(cut.length).toBeLessThanOrEqual(200);
    expect(cut).toMatch(/^Ein Text über Farbe, .* Raum\.…$|^Ein Text .*[a-zäöü,]…$/);
    expect(cut).toBe(wholeSummary(long));
    // A word longer than the cut: cut inside it, never inside an emoji's surrogate pair.
    expect(summary(`${'x'.repeat(198)}🎨🎨 more`)).toBe(`${'x'.repeat(198)}…`);
    expect(summary(`${'x'.repeat(197)}🎨🎨 more`)).toBe(`${'x'.repeat(197)}🎨…`);
  });

  test('the same as flattening the whole text, for texts of any length and whitespace (random, fixed seed)', async () => {
    const { summary } = await import('../../src/web/html.js');
    const fc = (await import('fast-check')).default;
    const piece = fc.constantFrom('a', 'Wort', 'ü', '草間', '🎨', ' ', '  ', '\n', '\t', ' \n \n ', ' '.repeat(450), 'x'.repeat(150));
    fc.assert(fc.property(fc.array(piece, { maxLength: 400 }), fc.integer({ min: 1, max: 300 }), (pieces, max) => {
      const text = pieces.join('');
      expect(summary(text, max)).toBe(wholeSummary(text, max));
    }), { seed: 27, numRuns: 500 });
  });
});
