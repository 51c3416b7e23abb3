import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { cliIo } from './io.js';
import { EtagCache, type KeptAnswer } from '../client/etag-cache.js';

/**
 * The answers `push` read, kept between runs, so the next dry run (or --prune) reads the server's
 * unchanged pages as 304s: one file per server and key, named by a hash of both (never the key
 * itself), readable by the user alone, under ART_CATALOG_CACHE_DIR (default ~/.cache/art-catalog/answers).
 * A file that cannot be read or written only costs the full answers.
 */
export class AnswerStore {
  private readonly file: string;

  constructor(baseUrl: string, key: string, dir = cliIo().env.ART_CATALOG_CACHE_DIR || join(homedir(), '.cache', 'art-catalog', 'answers')) {
    const name = createHash('sha256').update(`${baseUrl}\n${key}`).digest('hex').slice(0, 32);
    this.file = join(dir, `${name}.json`);
  }

  load(): EtagCache {
    const cache = new EtagCache({ maxEntries: 2_000, maxBytes: 64 * 1024 * 1024 });
    try {
      cache.load(JSON.parse(readFileSync(this.file, 'utf8')) as [string, KeptAnswer][]);
    } catch {
      // None yet, or unreadable: the run reads full answers.
    }
    return cache;
  }

  save(cache: EtagCache): void {
    try {
      mkdirSync(join(this.file, '..'), { recursive: true, mode: 0o700 });
      const temporary = `${this.file}.${process.pid}`;
      writeFileSync(temporary, JSON.stringify(cache.entries()), { mode: 0o600 });
      renameSync(temporary, this.file);
    } catch {
      // A cache that cannot be written is only a cache.
    }
  }
}
