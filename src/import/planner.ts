import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { HeaderReading, Kind } from './columns.js';
import { candidate, changedFields, findDuplicates, listShows, type Candidate, type Catalog, type Listed } from './plan.js';
import type { Hint, Problem } from './problem.js';
import { formatProblem, rowProblems, type FieldProblem, type Row, type RowProblem } from './rows.js';

/**
 * The one import planner (docs/architecture.md, The import planner): the rows read from a file →
 * the rows refused, the duplicates, the rows to send → compared with a catalog, what each would create,
 * update or leave unchanged → with a mirror, the records the file does not name. `push` (src/cli),
 * the console's Import and feeds (src/apply, src/feeds) all plan here, and each words the problems'
 * hints its own way: a problem is `{line, column, message, hint}`, never a string to parse again.
 */

/**
 * Rows per slice of work between two yields of the event loop (a 10,000-row file on the server). Each
 * step yields before its first slice too: the turn that read the file, or the catalog's last page, ends
 * there instead of going on with a slice of rows.
 */
const SLICE = 20;

/** A row the plan refuses, leaves out as a duplicate, or writes with a warning: its problems in file order. */
export interface RowIssue {
  label: string;
  line: number;
  problems: Problem[];
  /** A warning's row, as planned. */
  candidate?: Candidate;
}

export interface PlannedRow {
  label: string;
  line: number;
  title: string;
  id?: number;
  fields?: string[];
}

export interface Plan {
  kind: Kind;
  /** Where each field's problems stand in the file (a write refused later is placed the same way). */
  columnOf: ColumnOf;
  /** The file's rows. */
  total: number;
  /** Rows with a problem (and, once compared, rows that match several records), in file order. */
  refused: RowIssue[];
  /** Rows that denote the same record as an earlier row: not sent. */
  duplicates: RowIssue[];
  /** The valid rows, duplicates among them. */
  candidates: Candidate[];
  /** The rows to write, in file order. */
  send: Candidate[];
  /** The rows of `send` written with a warning (level `warning`: "price: no currency"). */
  warnings: RowIssue[];
  /** Once compared: the rows of `send` that create a record, that change one, and the count of those equal to theirs. */
  creates: PlannedRow[];
  updates: PlannedRow[];
  unchanged: number;
  /** The rows of `send` equal to their stored record (a feed's run does not write them). */
  same: Set<Candidate>;
  /** The record each unchanged row matched, by the row's label (the feed preview shows it). */
  sameIds: Map<string, number>;
}

/** Which column of the file fills each field, from the header's reading: where a field's problem stands. */
export type ColumnOf = ReadonlyMap<string, string>;

export function columnsOf(reading: Pick<HeaderReading, 'mapping'>): ColumnOf {
  const columnOf = new Map<string, string>();
  for (const [column, field] of Object.entries(reading.mapping)) if (field && !columnOf.has(field)) columnOf.set(field, column);
  return columnOf;
}

/**
 * The column of a field's problem: the column that fills the field (or, for `additional_images.0.url`,
 * the one that fills `additional_images`), else the field's own name; none for the row as a whole.
 */
function columnFor(field: string, columnOf: ColumnOf): string | null {
  if (field === '') return null;
  const top = field.split('.')[0]!;
  return columnOf.get(field) ?? columnOf.get(top) ?? (top === field ? field : null);
}

/** Field problems placed in the file. */
export const placed = (row: Pick<Row, 'line'>, problems: readonly FieldProblem[], columnOf: ColumnOf): Problem[] =>
  problems.map((p) => ({ line: row.line, column: columnFor(p.field, columnOf), message: formatProblem(p), hint: p.hint ?? null }));

const issue = (row: Pick<Row, 'label' | 'line'>, problems: Problem[]): RowIssue => ({ label: row.label, line: row.line, problems });

/**
 * Step one, with no catalog: each row checked as the server would check it, the valid rows identified,
 * and the rows that repeat an earlier one set apart. Yields the event loop every few rows.
 */
export async function checkRows(kind: Kind, rows: readonly Row[], entitySlug: string, columnOf: ColumnOf): Promise<Plan> {
  const refused: RowIssue[] = [];
  const candidates: Candidate[] = [];
  for (const [i, row] of rows.entries()) {
    if (i % SLICE === 0) await yieldToEventLoop();
    const problems = rowProblems(kind, row);
    if (problems.length > 0) refused.push(issue(row, placed(row, problems, columnOf)));
    else candidates.push(candidate(kind, row, entitySlug));
  }
  const duplicateOf = findDuplicates(kind, candidates);
  const duplicates = [...duplicateOf].map(([c, message]) => issue(c.row, [{ line: c.row.line, column: null, message, hint: null }]));
  const plan: Plan = {
    kind, columnOf, total: rows.length, refused, duplicates, candidates, send: candidates.filter((c) => !duplicateOf.has(c)), warnings: [],
    creates: [], updates: [], unchanged: 0, same: new Set(), sameIds: new Map(),
  };
  plan.warnings = warningsOf(plan.send, columnOf);
  return plan;
}

const warningsOf = (send: readonly Candidate[], columnOf: ColumnOf): RowIssue[] =>
  send.filter((c) => c.row.warnings?.length).map((c) => ({ ...issue(c.row, placed(c.row, c.row.warnings!, columnOf)), candidate: c }));

/** How a plan reads the whole of a record the list does not show in full (the store, or the API through its client). */
export type RecordReader = (id: number) => Promise<Record<string, unknown>>;

/**
 * Step two: the rows to send compared with the catalog. A row matching several records is refused
 * (its hint: an external_id); the others create, update or leave their record unchanged. `concurrency`
 * reads of a full record at a time (`push` over HTTP); the event loop is yielded every few rows.
 */
export async function compareRows(plan: Plan, catalog: Catalog, read: RecordReader, { concurrency = 1 } = {}): Promise<Plan> {
  const { kind } = plan;
  const ambiguous = new Set<Candidate>();
  const compared = await mapLimit(plan.send, concurrency, async (c, i) => {
    if (i % SLICE === 0) await yieldToEventLoop();
    const match = catalog.match(c.identity);
    if (match.action === 'create') return { action: 'create' as const };
    if (match.action === 'ambiguous') {
      ambiguous.add(c);
      plan.refused.push(issue(c.row, [{
        line: c.row.line, column: null, hint: { kind: 'external-id' },
        message: `matches several ${kind} (#${match.candidates.join(', #')}) by artist, title and year`,
      }]));
      return { action: 'ambiguous' as const };
    }
    // The list shows most fields; a row that sets one it does not show is compared with the whole record.
    const record = listShows(kind, c.row.body) ? match.record : await read(match.record.id);
    return { action: 'match' as const, id: match.record.id, fields: changedFields(kind, record, c.input) };
  });
  compared.forEach((outcome, i) => {
    const c = plan.send[i]!;
    if (outcome.action === 'create') plan.creates.push({ label: c.row.label, line: c.row.line, title: c.input.title });
    else if (outcome.action === 'match' && outcome.fields.length > 0) plan.updates.push({ label: c.row.label, line: c.row.line, id: outcome.id, title: c.input.title, fields: outcome.fields });
    else if (outcome.action === 'match') {
      plan.unchanged++;
      plan.same.add(c);
      plan.sameIds.set(c.row.label, outcome.id);
    }
  });
  plan.refused.sort((a, b) => a.line - b.line);
  if (ambiguous.size > 0) {
    plan.send = plan.send.filter((c) => !ambiguous.has(c));
    plan.warnings = plan.warnings.filter((w) => !ambiguous.has(w.candidate!));
  }
  return plan;
}

/** The records the file's valid rows name (a row matching several names each): a mirror keeps them. */
export function namedRecords(plan: Pick<Plan, 'candidates'>, catalog: Catalog): Set<number> {
  return new Set(plan.candidates.flatMap((c) => {
    const match = catalog.match(c.identity);
    return match.action === 'match' ? [match.record.id] : match.action === 'ambiguous' ? match.candidates : [];
  }));
}

/** Step three, with a mirror: the catalog's records the file does not name (of those `owned`, when given). */
export const mirrorDeletions = (catalog: Catalog, named: ReadonlySet<number>, owned?: ReadonlySet<number>): Listed[] =>
  catalog.records.filter((r) => !named.has(r.id) && (!owned || owned.has(r.id)));

/** What the server said of a row it refused (a batch item's result, or the store's ApiError), placed in the file. */
export function refusalProblems(row: Pick<Row, 'line'>, said: { message: string; details?: FieldProblem[] | undefined; candidates?: number[] | undefined }, columnOf: ColumnOf): Problem[] {
  const problems = placed(row, said.details ?? [{ field: '', message: said.message }], columnOf);
  if (said.candidates) {
    const last = problems[problems.length - 1]!;
    problems[problems.length - 1] = { ...last, message: `${last.message} (matches #${said.candidates.join(', #')})`, hint: { kind: 'external-id' } };
  }
  return problems;
}

/** A caller's words for each hint, appended to the message as they are (`; give the row …`, ` (set one …)`). */
export type HintWords = (hint: Hint) => string;

/** A problem as one line, its hint worded by the caller. */
export const worded = (problem: Pick<Problem, 'message' | 'hint'>, words: HintWords): string => (problem.hint ? `${problem.message}${words(problem.hint)}` : problem.message);

/** A row's problems as `push` and the console list them: its label and its problems in one line. */
export const rowLine = (row: RowIssue, words: HintWords): RowProblem => ({ label: row.label, message: row.problems.map((p) => worded(p, words)).join('; ') });

/** Runs `work` over `items`, `limit` at a time, keeping the order of the answers. */
async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
