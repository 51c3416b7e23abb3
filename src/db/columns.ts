/** `{ column: p.column, … }`: the values of an insert or update statement, one parameter per column. */
export function columns<P, K extends keyof P>(p: P, names: readonly K[]): Pick<P, K> {
  return Object.fromEntries(names.map((name) => [name, p[name]])) as Pick<P, K>;
}

type Uncovered<Table, Covered> = [Exclude<keyof Table, Covered>] extends [never]
  ? unknown
  : { 'every column must be listed or excepted; missing': Exclude<keyof Table, Covered> };

/**
 * A list of a table's columns that names every column but the excepted ones: a column added to the
 * table and forgotten in the list fails to compile (instead of being silently never written).
 *
 *   const STORED = tableColumns<ArtworksTable>()(['title', …], ['id', 'entity_id', 'created_at']);
 */
export function tableColumns<Table>() {
  return <const Listed extends readonly (keyof Table)[], const Except extends readonly (keyof Table)[]>(
    listed: Listed & Uncovered<Table, Listed[number] | Except[number]>,
    _except: Except,
  ): Listed => listed;
}
