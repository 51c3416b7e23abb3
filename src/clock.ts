/** Now, as the service stores and answers it: UTC ISO 8601 with milliseconds. */
export const nowIso = (): string => new Date().toISOString();

/** Today's date in UTC, YYYY-MM-DD: the line between upcoming and past events. */
export const todayUtc = (): string => nowIso().slice(0, 10);
