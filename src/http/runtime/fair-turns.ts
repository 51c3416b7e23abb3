import { performance } from 'node:perf_hooks';

/**
 * How long large answers may work within one turn of the event loop, all connections together. Each
 * answer already yields a turn between its slices; but a hundred requests arriving in the same poll
 * each make their first slice in that poll's callbacks, one after another, before any other request is
 * read (measured: one /healthz waited 95 ms behind 100 changelog requests of ~1 ms each). With a shared
 * budget, work past it waits for a later turn, so a turn costs about the budget plus one unit of work.
 * 4 ms against 8: the same throughput for 20 cursor readers, and their worst /healthz 21 ms against 23.
 */
const TURN_BUDGET_MS = 4;

let turnStarted = 0;
let turnOpen = false;

function closeTurn(): void {
  turnOpen = false;
}

/** Whether work may go on in this turn; the first call of a turn opens it. */
function admitted(): boolean {
  const now = performance.now();
  if (!turnOpen) {
    // The turn ends at the event loop's next check phase: setImmediate runs its callbacks in order, so
    // this runs before the work that waited for that turn.
    turnOpen = true;
    turnStarted = now;
    setImmediate(closeTurn);
    return true;
  }
  return now - turnStarted < TURN_BUDGET_MS;
}

/**
 * Resolves at once (undefined: nothing to await) while this turn's budget lasts, and in a later turn
 * once it is spent. Call it before each unit of work a large answer does (making a slice, reading a
 * chunk).
 */
export function fairTurn(): Promise<void> | undefined {
  return admitted() ? undefined : waitForTurn();
}

/**
 * Work resumed in a later turn asks again: a hundred waiters resumed in the same check phase would
 * otherwise all run there, one after another (measured: 57 ms of CPU in one turn).
 */
async function waitForTurn(): Promise<void> {
  do await new Promise<void>((resolve) => { setImmediate(resolve); });
  while (!admitted());
}
