/** A day in milliseconds: dates here are UTC days, so every day has this many (no daylight saving). */
export const DAY_MS = 86_400_000;

/** The UTC date (`YYYY-MM-DD`) `days` days after `day`, or before it when `days` is negative. */
export const daysFrom = (day: string, days: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
