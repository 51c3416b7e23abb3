import type SQLite from 'better-sqlite3';

/** Builds a row object from better-sqlite3's raw array of values. */
export type RowBuilder = (values: unknown[]) => unknown;

/**
 * better-sqlite3 builds row objects through V8's slow generic property path, which costs more than the
 * query for a wide row. Raw arrays plus an object literal per statement shape (column names are our
 * schema's, quoted by JSON.stringify) give V8 one fast hidden class per shape.
 */
export function rowBuilder(columns: readonly string[]): RowBuilder {
  const fields = columns.map((name, i) => `${JSON.stringify(name)}: values[${i}]`);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from column names, not from input
  return new Function('values', `return { ${fields.join(', ')} };`) as RowBuilder;
}

export interface Prepared {
  statement: SQLite.Statement;
  /** null for statements that return no rows. */
  toRow: RowBuilder | null;
}

/**
 * Prepared statements by SQL text, least recently used first out. Statements are few shapes (a few
 * per page size), but every prepared statement holds SQLite memory, so the cache has a bound.
 */
export class PreparedCache {
  private readonly entries = new Map<string, Prepared>();

  constructor(private readonly sqlite: SQLite.Database, private readonly capacity: number) {}

  get(sql: string): Prepared {
    let found = this.entries.get(sql);
    if (found) {
      // Most recent last: a Map keeps insertion order.
      this.entries.delete(sql);
    } else {
      const statement = this.sqlite.prepare(sql);
      let toRow: RowBuilder | null = null;
      if (statement.reader) {
        statement.raw(true);
        toRow = rowBuilder(statement.columns().map((column) => column.name));
      }
      found = { statement, toRow };
      if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(sql, found);
    return found;
  }

  /** Runs a statement and returns its rows (none for a statement that returns none). */
  run(sql: string, parameters: readonly unknown[]): unknown[] {
    const { statement, toRow } = this.get(sql);
    if (!toRow) {
      statement.run(parameters);
      return [];
    }
    return (statement.all(parameters) as unknown[][]).map(toRow);
  }
}
