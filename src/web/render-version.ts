import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What, besides the data, decides the bytes of a public answer: the code that renders it and the base
 * URL of its links. Part of every cache key and ETag, so a deploy that changes the markup is never
 * answered 304 with the old page, while processes running the same code agree. The code is hashed
 * once per process; the base URL can change once, when PORT=0 learns its port.
 */
export function renderVersion(baseUrl: string): string {
  codeHash ??= hashOfCode();
  return createHash('sha256').update(codeHash).update(baseUrl).digest('base64url').slice(0, 12);
}

let codeHash: string | undefined;

function hashOfCode(): string {
  const folder = dirname(fileURLToPath(import.meta.url));
  const hash = createHash('sha256');
  for (const file of readdirSync(folder).filter((f) => /\.(js|ts)$/.test(f)).sort()) hash.update(readFileSync(`${folder}/${file}`));
  return hash.digest('base64url');
}
