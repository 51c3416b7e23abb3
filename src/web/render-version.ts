import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What, besides the data, decides the bytes of a public answer: the code that renders it and the base
 * URL of its links. Hashed once at start into every cache key and ETag, so a deploy that changes the
 * markup is never answered 304 with the old page, while processes running the same code agree.
 */
export function renderVersion(baseUrl: string): string {
  const folder = dirname(fileURLToPath(import.meta.url));
  const hash = createHash('sha256').update(baseUrl);
  for (const file of readdirSync(folder).filter((f) => /\.(js|ts)$/.test(f)).sort()) hash.update(readFileSync(`${folder}/${file}`));
  return hash.digest('base64url').slice(0, 12);
}
