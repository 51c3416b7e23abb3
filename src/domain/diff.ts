export type FieldChanges = Record<string, { old: unknown; new: unknown }>;

type Values = Record<string, unknown>;

/**
 * The changelog's `field_changes`: each listed field whose value differs between `before` and `after`.
 * `before` is null for a creation (old: null), `after` null for a deletion (new: null).
 */
export function fieldChanges(before: Values | null, after: Values | null, fields: readonly string[]): FieldChanges {
  const changes: FieldChanges = {};
  for (const field of fields) {
    const oldValue = before?.[field] ?? null;
    const newValue = after?.[field] ?? null;
    if (oldValue !== newValue) changes[field] = { old: oldValue, new: newValue };
  }
  return changes;
}

/** `base` with every non-null value of `patch` laid over it (the POST merge rule). */
export function mergeNonNull<T extends Values>(base: T, patch: Partial<T>): T {
  const merged: Values = { ...base };
  for (const [field, value] of Object.entries(patch)) if (value != null) merged[field] = value;
  return merged as T;
}

/** `base` with every field `patch` defines laid over it, `null` included (the PUT rule: null clears). */
export function mergeDefined<T extends Values>(base: T, patch: Partial<T>): T {
  const merged: Values = { ...base };
  for (const [field, value] of Object.entries(patch)) if (value !== undefined) merged[field] = value;
  return merged as T;
}

/** The fields of `values` that carry a value (what a POST sets on creation). */
export function withoutNulls<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v != null)) as Partial<T>;
}

/** Whether a write changed anything a caller sees, beyond the sync time every write refreshes. */
export const isRealChange = (changes: FieldChanges): boolean => Object.keys(changes).some((f) => f !== 'last_synced_at');
