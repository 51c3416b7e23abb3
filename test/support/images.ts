import { createHash } from 'node:crypto';
import type { Db } from '../../src/db/types.js';
import { derivativeName, IMAGE_FORMATS } from '../../src/images/derive.js';
import { recordOriginal } from '../../src/store/images.js';

/**
 * The state a worker leaves after processing `url` (a `width` × `height` original), for tests of what
 * pages and answers show: the pipeline itself is tested with real fetches in test/images/images.test.ts.
 */
export async function imageProcessed(db: Db, url: string, width = 2400, height = 1800): Promise<string> {
  const hash = createHash('sha256').update(url).digest('hex');
  const widths = [...new Set([480, 960, 1600].map((w) => Math.min(w, width)))];
  const derivatives = widths.flatMap((w) => IMAGE_FORMATS.map((format) => ({
    name: derivativeName(hash, w, format), width: w, height: Math.round((height * w) / width), format,
  })));
  await recordOriginal(db, { hash, width, height, derivatives }, new Date().toISOString());
  await db.updateTable('images').set({ status: 'ready', hash, checked_at: new Date().toISOString() }).where('url', '=', url).execute();
  return hash;
}
