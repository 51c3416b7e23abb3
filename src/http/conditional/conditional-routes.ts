import { ApiError } from '../../domain/errors.js';

/** For `If-None-Match: *` on a route of one record: whether reading it finds it (a 404 means no). */
export function recordExists(readRecord: () => Promise<unknown>): Promise<boolean> {
  return readRecord().then(() => true, (error: unknown) => {
    if (error instanceof ApiError && error.status === 404) return false;
    throw error;
  });
}
