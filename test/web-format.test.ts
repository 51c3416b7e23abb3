import { afterEach, describe, expect, test, vi } from 'vitest';

// The public pages' dates and country names, and that their ICU formatters are made on first use: a
// formatter maps ICU's locale data (~6.5 MB of the node binary's pages in the server's RSS), which a
// server that renders no page never needs (docs/performance.md, "Fifth look at memory").
describe('public page formatting', () => {
  afterEach(() => vi.restoreAllMocks());

  test('loading the module makes no ICU formatter; the first date and country name make one each, once', async () => {
    const dates = vi.spyOn(Intl, 'DateTimeFormat');
    const regions = vi.spyOn(Intl, 'DisplayNames');
    const { formatDates, countryName, formatPlace } = await import('../src/web/format.js');
    expect(dates).not.toHaveBeenCalled();
    expect(regions).not.toHaveBeenCalled();

    expect(formatDates('2026-11-27', '2026-12-03')).toBe('27 November 2026 – 3 December 2026');
    expect(formatDates('2026-11-27', '2026-11-27')).toBe('27 November 2026');
    expect(formatDates(null, null)).toBe('Date to be announced');
    expect(countryName('DE')).toBe('Germany');
    expect(formatPlace('Lyon', 'FR')).toBe('Lyon, France');
    expect(dates).toHaveBeenCalledTimes(1);
    expect(regions).toHaveBeenCalledTimes(1);
  });

  test('prices: one formatter per currency, made once; a code ICU does not know is written after the number', async () => {
    const numbers = vi.spyOn(Intl, 'NumberFormat');
    const { formatPrice } = await import('../src/web/format.js');
    expect(formatPrice(12500, 'EUR')).toBe('€12,500');
    expect(formatPrice(900, 'EUR')).toBe('€900');
    expect(formatPrice(40, 'USD')).toBe('$40');
    expect(numbers).toHaveBeenCalledTimes(2);
    expect(formatPrice(1500, 'ZZZZ')).toBe('1,500 ZZZZ');
    expect(formatPrice(1500, 'ZZZZ')).toBe('1,500 ZZZZ');
    expect(numbers).toHaveBeenCalledTimes(3);
    expect(formatPrice(1500, null)).toBe('1,500');
    expect(formatPrice(null, 'EUR')).toBeNull();
  });

  test('a code ICU cannot name is shown as it was stored', async () => {
    const { countryName } = await import('../src/web/format.js');
    expect(countryName('not a region')).toBe('not a region');
    expect(countryName(null)).toBeNull();
  });
});
