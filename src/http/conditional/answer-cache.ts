import { LRUCache } from 'lru-cache';
import type { Compressible } from '../../http-common/compression.js';

/** A keyed GET's 200 answer: its JSON bytes, the headers that go with them, and compressed copies. */
export interface Answer extends Compressible {
  link: string | undefined;
}

/**
 * API answers by ETag, which names the entity, its data version and the URL: an answer is built once
 * per version of its data and sent again while nothing changed, in every process (a write anywhere
 * changes the version, so the next request asks for a new tag and the old entry ages out). Bounded by
 * bytes (ANSWER_CACHE_MB), compressed copies included: each is made once, when a client first asks
 * for that coding.
 */
export class AnswerCache {
  private readonly entries: LRUCache<string, Answer> | undefined;
  hits = 0;

  constructor(maxBytes: number) {
    if (maxBytes <= 0) return;
    this.entries = new LRUCache<string, Answer>({
      maxSize: maxBytes,
      // An entry's size is known when it is set; its copies are a fraction of it.
      sizeCalculation: (answer) => Math.max(1, Math.ceil(answer.body.length * 1.3) + 256),
    });
  }

  get(tag: string): Answer | undefined {
    const answer = this.entries?.get(tag);
    if (answer) this.hits++;
    return answer;
  }

  /** Keeps an answer (when the cache has room at all) and returns it, kept or not. */
  set(tag: string, body: Buffer, link: string | undefined): Answer {
    const answer: Answer = { body, link, encoded: {} };
    this.entries?.set(tag, answer);
    return answer;
  }
}
