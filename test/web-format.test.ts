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

  test('a code ICU cannot name is shown as it was stored', async () => {
    const { countryName } = await import('../src/web/format.js');
    expect(countryName('not a region')).toBe('not a region');
    expect(countryName(null)).toBeNull();
  });
});
