import type { RequiredScope } from '../../domain/keys.js';
import type { RequestSeries } from '../plugins/metrics.js';

/** What an early answer is: a 304 for a matching If-None-Match, or a kept answer (200). */
export type Kind = '304' | '200';

/** The duration series of the early answers of one route, resolved at the first answer of each. */
export interface EarlySeries {
  'GET 200'?: RequestSeries;
  'GET 304'?: RequestSeries;
  'HEAD 304'?: RequestSeries;
}

/** A route whose answers the early path may send: what each of them is checked against and counted under. */
export interface EarlyRoute {
  /** The route's pattern, the metrics' label. */
  pattern: string;
  /** The route's scope: checked again on every early answer. */
  scope: RequiredScope | null;
  /** The route can answer with a large body: its answers pass the unread-answers check (slow-readers.ts). */
  largeAnswer: boolean;
  series: EarlySeries;
}

/** What an answer of Fastify's showed about one key and URL: whose data the tag names, and on which route. */
export interface Remembered {
  entityId: number;
  route: EarlyRoute;
}

/** One remembered pair, and where it is filed. */
export interface Entry {
  shelf: Shelf;
  /** The pairs of its request (kind, method, URL), by key hash: `shelf`'s entry for `url`. */
  pairs: Map<string, Entry>;
  url: string;
  keyHash: string;
  bytes: number;
  remembered: Remembered;
  /** Used since it was last passed over for forgetting: it is kept once more (`remember`). */
  used: boolean;
}

/** The pairs of one kind and method, by URL, then by key hash. */
type Shelf = Map<string, Map<string, Entry>>;

/** The memory one remembered pair is counted for: its name's characters and the Map slots and object around them. */
const ENTRY_OVERHEAD_BYTES = 128;

/**
 * The (kind, method, raw URL, key hash) pairs Fastify answered lately with a 304 or a kept answer,
 * bounded by bytes (NOT_MODIFIED_MEMO_KB); the oldest not used since it was last passed over goes
 * first (the "second chance" approximation of least recently used: a use marks its entry instead of
 * moving it, so the early answers' hot path writes one field). Holds no key, no
 * answer and no tag: each early answer reads the version and checks the key again. Filed by URL,
 * then key hash, so a request is looked up without building a name for it, and most requests are
 * turned away by their URL before their key is hashed.
 */
export class EarlyAnswerMemo {
  private readonly kept: Shelf = new Map();
  private readonly notModified: Shelf = new Map();
  private readonly notModifiedHead: Shelf = new Map();
  /** Every entry, the one remembered or passed over longest ago first. */
  private readonly order = new Set<Entry>();
  private used = 0;

  constructor(private readonly maxBytes: number) {}

  private shelf(kind: Kind, method: string): Shelf {
    return kind === '200' ? this.kept : method === 'HEAD' ? this.notModifiedHead : this.notModified;
  }

  /** The remembered pairs of a request, by key hash; undefined when no key's pair is remembered (no key need be hashed). */
  pairsOf(kind: Kind, method: string, url: string): ReadonlyMap<string, Entry> | undefined {
    return this.shelf(kind, method).get(url);
  }

  /** The pair of a key among a request's pairs (`pairsOf`), marked used. */
  get(pairs: ReadonlyMap<string, Entry>, keyHash: string): Remembered | undefined {
    const entry = pairs.get(keyHash);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.remembered;
  }

  remember(kind: Kind, method: string, url: string, keyHash: string, remembered: Remembered): void {
    // Counted as the characters of the pair's name (kind, method, URL, key hash) and the overhead.
    const bytes = kind.length + method.length + url.length + keyHash.length + 3 + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.maxBytes) return;
    const shelf = this.shelf(kind, method);
    const known = shelf.get(url)?.get(keyHash);
    if (known !== undefined) this.forget(known);
    let pairs = shelf.get(url);
    if (pairs === undefined) shelf.set(url, (pairs = new Map<string, Entry>()));
    const entry: Entry = { shelf, pairs, url, keyHash, bytes, remembered, used: false };
    pairs.set(keyHash, entry);
    this.order.add(entry);
    this.used += bytes;
    // An entry used since it was last passed over goes to the back, unmarked, behind the new one; it
    // comes round again after the others, so the loop ends. The new one stays (it fits alone).
    for (const oldest of this.order) {
      if (this.used <= this.maxBytes) break;
      if (oldest === entry) continue;
      this.order.delete(oldest);
      if (oldest.used) {
        oldest.used = false;
        this.order.add(oldest);
      } else {
        this.forget(oldest);
      }
    }
  }

  private forget(entry: Entry): void {
    this.order.delete(entry);
    this.used -= entry.bytes;
    entry.pairs.delete(entry.keyHash);
    if (entry.pairs.size === 0) entry.shelf.delete(entry.url);
  }

  bytes(): number {
    return this.used;
  }
}
