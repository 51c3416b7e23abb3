import { sql } from 'kysely';
import pg from 'pg';
import { connect } from '../../src/db/connect.js';
import type { Db } from '../../src/db/types.js';

const MARKER = `select 'round-trips'`;

/**
 * Runs `work` on a PostgreSQL database handle of its own and gives back its result and every
 * statement that handle's connections sent, a round trip each. The handle's own pool, not the test
 * app's: the app's job runner shares the process and queries meanwhile. Its connections are told by
 * their class (src/db/connect.ts makes one per handle), learnt from a marker statement sent first.
 */
export async function roundTrips<T>(url: string, work: (db: Db) => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const own = connect(url);
  const sent: string[] = [];
  let ours: unknown;
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = prototype.query;
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text: string };
    const text = typeof config === 'string' ? config : config.text;
    if (text === MARKER) ours = this.constructor;
    else if (ours !== undefined && this.constructor === ours) sent.push(text);
    return Reflect.apply(query, this, args);
  };
  try {
    await sql.raw(MARKER).execute(own.db);
    return { result: await work(own.db), sent };
  } finally {
    prototype.query = query;
    await own.close();
  }
}
