import { randomBytes } from 'node:crypto';
import type { Kind } from '../import/columns.js';
import type { Table } from '../import/table.js';
import type { Encoding } from '../import/text.js';
import type { ApplyJob, MirrorChoice, Preview } from '../apply/index.js';

/**
 * Uploads the Import page holds between its steps (docs/console.md, Import: nothing is written before Apply).
 * Held in this process's memory, bounded (docs/console.md, Import): one per user (a new upload replaces
 * the last), at most PER_ENTITY per gallery (its own oldest that is not being applied or fetched makes
 * room; when both are, the upload is refused), a feed's file counting from before its fetch starts, at most MAX_HELD in all (the oldest of any
 * gallery that is not being applied makes room), each for HOLD_MS after its last use. So a few
 * editors cannot hold every slot: each held upload counts against its own gallery. Each is tied to the
 * user and the session that uploaded it; another user's or session's id answers 404.
 */

const MAX_HELD = 16;
export const PER_ENTITY = 2;
const HOLD_MS = 30 * 60_000;
/**
 * Files read (parsed) at once in this process, across galleries; another read waits READ_WAIT_MS for its
 * turn, then is refused as busy. Turns go round-robin between the galleries that wait, and a gallery
 * that already reads waits behind those that do not: one gallery's uploads cannot take every turn.
 */
export const MAX_READS = 2;
const READ_WAIT_MS = 5_000;
/**
 * The heap held tables may hold in this process, in bytes. Tables are held packed
 * (src/import/packed-rows.ts): about the file's text, 21.5 MB for the 19 MB CSV of 380,000 short rows
 * that held 134 MB as objects (counted 25 MB: the count errs high), and at worst (a 20 MB file of wide
 * characters, two bytes each) ~45 MB. 64 MB holds two such CSVs, or one worst case beside a small one;
 * with two reads in flight (each its bytes, its text and its table being built, ~90 MB) and the server's
 * own ~150 MB, the process stays under 400 MB (docs/performance.md, Bounds on held imports). Counted in
 * bytes, not cells: packed, a cell costs what its text does.
 */
export const HELD_BUDGET_BYTES = 64 * 1024 * 1024;

export interface HeldImport {
  id: string;
  userId: number;
  entityId: number;
  session: string;
  name: string;
  kind: Kind;
  /** The uploaded bytes, until they are read as a table. */
  bytes: Buffer | null;
  /** Chosen on the page, or UTF-8 until the bytes prove otherwise. */
  encoding: Encoding;
  /** The line and byte that are not UTF-8, while no encoding has been chosen. */
  notUtf8?: { line: number; byte: number };
  /** A workbook's sheets, while none has been chosen (a workbook of one sheet is read without asking). */
  sheets?: string[];
  /** The sheet chosen from `sheets`. */
  sheet?: string;
  /** The read of `bytes` under way (read-upload.ts). */
  reading?: Promise<unknown>;
  table?: Table;
  /** The person's column choices: column name (lower-case) → field, or null to leave it out. */
  map: Map<string, string | null>;
  mirror: MirrorChoice;
  preview?: Preview;
  job?: ApplyJob;
  /** A feed being connected or remapped (pages/feeds.ts): its file is read here once and saved as a feed instead of applied. */
  feed?: { url: string; feedId: number | null; sheet: string | null };
  /** Its file is being fetched (a feed's Connect or Edit mapping): it holds its gallery's slot, and cannot be let go, until the fetch ends. */
  fetching?: boolean;
  touched: number;
}

export class HeldImports {
  private readonly held = new Map<string, HeldImport>();
  /** Feed previews in flight per gallery (POST /v1/feeds/preview): each holds one of its slots while it reads its file. */
  private readonly previews = new Map<number, number>();
  /** The bytes held tables may hold (HELD_BUDGET_BYTES; tests lower it to see what happens past it). */
  budgetBytes = HELD_BUDGET_BYTES;
  /** Reads under way in this process, per gallery. */
  private readonly reading = new Map<number, number>();
  /** Reads waiting for a turn, per gallery (oldest first); the map's order is the galleries' turn order. */
  private readonly waiting = new Map<number, (() => void)[]>();

  /**
   * A turn to read (parse) a file for gallery `entityId`: at most MAX_READS at once in this process. Waits
   * up to READ_WAIT_MS for one; undefined when none came (the page answers busy). The answer ends the turn;
   * call it once.
   */
  async readTurn(entityId: number, waitMs = READ_WAIT_MS): Promise<(() => void) | undefined> {
    if (this.readsUnderWay() >= MAX_READS || this.waiting.size > 0) {
      const turn = await new Promise<boolean>((resolve) => {
        const go = () => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          const queue = this.waiting.get(entityId)!;
          queue.splice(queue.indexOf(go), 1);
          if (queue.length === 0) this.waiting.delete(entityId);
          resolve(false);
        }, waitMs);
        const queue = this.waiting.get(entityId);
        if (queue) queue.push(go);
        else this.waiting.set(entityId, [go]);
        this.handOver();
      });
      // A turn handed over already counts in `reading`.
      if (!turn) return undefined;
    } else {
      this.reading.set(entityId, (this.reading.get(entityId) ?? 0) + 1);
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = this.reading.get(entityId)! - 1;
      if (left > 0) this.reading.set(entityId, left);
      else this.reading.delete(entityId);
      this.handOver();
    };
  }

  /** Reads waiting for a turn. */
  waitingReads(): number {
    let waiting = 0;
    for (const queue of this.waiting.values()) waiting += queue.length;
    return waiting;
  }

  private readsUnderWay(): number {
    let reads = 0;
    for (const count of this.reading.values()) reads += count;
    return reads;
  }

  /**
   * Free turns go to waiting galleries: first to those reading the fewest files now, among them in turn
   * order; the gallery served goes to the end of the order.
   */
  private handOver(): void {
    while (this.readsUnderWay() < MAX_READS && this.waiting.size > 0) {
      let next: number | undefined;
      for (const entityId of this.waiting.keys()) {
        if (next === undefined || (this.reading.get(entityId) ?? 0) < (this.reading.get(next) ?? 0)) next = entityId;
      }
      const queue = this.waiting.get(next!)!;
      const go = queue.shift()!;
      this.waiting.delete(next!);
      if (queue.length > 0) this.waiting.set(next!, queue);
      this.reading.set(next!, (this.reading.get(next!) ?? 0) + 1);
      go();
    }
  }

  /**
   * Keeps a table just read within the budget: idle held uploads are let go first from the gallery
   * whose tables hold the most, the oldest of it first, so one gallery's many large files make room from
   * its own before another's; if the held tables are still past it, `upload` is let go too and the answer
   * is false (busy).
   */
  admit(upload: HeldImport): boolean {
    const all = () => [...this.held.values()];
    const total = () => all().reduce((sum, h) => sum + heldBytes(h), 0);
    while (total() > this.budgetBytes) {
      const idle = all().filter((h) => h !== upload && heldBytes(h) > 0 && !running(h));
      if (idle.length === 0) break;
      const holding = new Map<number, number>();
      for (const h of all()) holding.set(h.entityId, (holding.get(h.entityId) ?? 0) + heldBytes(h));
      const most = Math.max(...idle.map((h) => holding.get(h.entityId)!));
      const victim = idle.filter((h) => holding.get(h.entityId) === most).sort((a, b) => a.touched - b.touched)[0]!;
      this.held.delete(victim.id);
    }
    if (total() <= this.budgetBytes) return true;
    this.release(upload);
    return false;
  }

  /**
   * One of the gallery's PER_ENTITY slots for a feed preview, or undefined when its slots are busy
   * (previews in flight and uploads being applied). The answer lets the slot go; call it once.
   */
  claim(entityId: number): (() => void) | undefined {
    this.expire();
    const applying = [...this.held.values()].filter((h) => h.entityId === entityId && running(h)).length;
    if (this.previewsOf(entityId) + applying >= PER_ENTITY) return undefined;
    this.previews.set(entityId, this.previewsOf(entityId) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.previewsOf(entityId) - 1;
      if (left > 0) this.previews.set(entityId, left);
      else this.previews.delete(entityId);
    };
  }

  private previewsOf(entityId: number): number {
    return this.previews.get(entityId) ?? 0;
  }

  /**
   * Holds a new upload for `userId`'s session, replacing that user's earlier one; undefined when the
   * gallery's slots, or every slot, are being applied.
   */
  hold(upload: Omit<HeldImport, 'id' | 'touched'>): HeldImport | undefined {
    this.expire();
    for (const [id, other] of this.held) if (other.userId === upload.userId && !running(other)) this.held.delete(id);
    // A feed preview in flight holds one of the gallery's slots too.
    while ([...this.held.values()].filter((h) => h.entityId === upload.entityId).length + this.previewsOf(upload.entityId) >= PER_ENTITY) {
      const oldest = [...this.held.values()].filter((h) => h.entityId === upload.entityId && !running(h)).sort((a, b) => a.touched - b.touched)[0];
      if (!oldest) return undefined;
      this.held.delete(oldest.id);
    }
    if (this.held.size >= MAX_HELD) {
      const oldest = [...this.held.values()].filter((h) => !running(h)).sort((a, b) => a.touched - b.touched)[0];
      if (!oldest) return undefined;
      this.held.delete(oldest.id);
    }
    const held: HeldImport = { ...upload, id: randomBytes(12).toString('base64url'), touched: Date.now() };
    this.held.set(held.id, held);
    return held;
  }

  /** The upload `id` if it belongs to this user and session, kept for another HOLD_MS. */
  get(id: string, userId: number, session: string): HeldImport | undefined {
    this.expire();
    const held = this.held.get(id);
    if (!held || held.userId !== userId || held.session !== session) return undefined;
    held.touched = Date.now();
    return held;
  }

  /** Lets an upload go (its file could not be read): its id answers 404 from now on. */
  release(upload: HeldImport): void {
    if (this.held.get(upload.id) === upload) this.held.delete(upload.id);
  }

  private expire(): void {
    const now = Date.now();
    for (const [id, held] of this.held) if (now - held.touched > HOLD_MS && !running(held)) this.held.delete(id);
  }
}

/**
 * A held table's heap: what its packed rows hold, or for rows held as objects 118 bytes a cell, a row
 * counting one more for itself (measured, docs/performance.md, Bounds on held imports).
 */
const heldBytes = (held: HeldImport): number => {
  if (!held.table) return 0;
  const { rows, columns } = held.table;
  return rows.heldBytes?.() ?? rows.length * (columns.length + 1) * 118;
};

/**
 * Held uploads that cannot make room: one being fetched, read (parsed: its bytes and its table are both in
 * memory until the read ends) or applied. Each counts against its gallery's slots until then, so one
 * editor's parallel Connects parse at most PER_ENTITY files at once.
 */
const running = (held: HeldImport): boolean => held.fetching === true || held.reading !== undefined || (held.job !== undefined && !held.job.finished);
