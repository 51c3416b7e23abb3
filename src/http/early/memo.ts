import type { RequiredScope } from '../../domain/keys.js';

/** What an early answer is: a 304 for a matching If-None-Match, or a kept answer (200). */
export type Kind = '304' | '200';

/** What an answer of Fastify's showed about one key and URL: whose data the tag names, and what it counts under. */
export interface Remembered {
  entityId: number;
  /** The route's pattern, the metrics' label. */
  route: string;
  /** The route's scope: checked again on every early answer. */
  scope: RequiredScope | null;
  /** The route can answer with a large body: its answers pass the unread-answers check (slow-readers.ts). */
  largeAnswer: boolean;
}

/** The memory one remembered pair is counted for: its name's characters and the Map slot and object around them. */
const ENTRY_OVERHEAD_BYTES = 128;
const entryBytes = (id: string): number => id.length + ENTRY_OVERHEAD_BYTES;

/**
 * The (kind, method, raw URL, key hash) pairs Fastify answered lately with a 304 or a kept answer,
 * bounded by bytes (NOT_MODIFIED_MEMO_KB); the one used least recently goes first. Holds no key, no
 * answer and no tag: each early answer reads the version and checks the key again.
 */
export class EarlyAnswerMemo {
  private readonly entries = new Map<string, { request: string; remembered: Remembered }>();
  /** How many remembered pairs each request (kind, method, URL) has: most requests are turned away by it before their key is hashed. */
  private readonly requests = new Map<string, number>();
  private used = 0;

  constructor(private readonly maxBytes: number) {}

  static request(kind: Kind, method: string, url: string): string {
    return `${kind} ${method} ${url}`;
  }

  /** Whether some key's pair for this request is remembered: without one, no key need be hashed. */
  holdsRequest(request: string): boolean {
    return this.requests.has(request);
  }

  get(request: string, keyHash: string): Remembered | undefined {
    const id = `${request} ${keyHash}`;
    const entry = this.entries.get(id);
    if (entry === undefined) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.remembered;
  }

  remember(request: string, keyHash: string, remembered: Remembered): void {
    const id = `${request} ${keyHash}`;
    const bytes = entryBytes(id);
    if (bytes > this.maxBytes) return;
    if (this.entries.has(id)) this.forget(id);
    this.entries.set(id, { request, remembered });
    this.used += bytes;
    this.requests.set(request, (this.requests.get(request) ?? 0) + 1);
    for (const oldest of this.entries.keys()) {
      if (this.used <= this.maxBytes) break;
      this.forget(oldest);
    }
  }

  private forget(id: string): void {
    const { request } = this.entries.get(id)!;
    this.entries.delete(id);
    this.used -= entryBytes(id);
    const pairs = this.requests.get(request)! - 1;
    if (pairs === 0) this.requests.delete(request);
    else this.requests.set(request, pairs);
  }

  bytes(): number {
    return this.used;
  }
}
