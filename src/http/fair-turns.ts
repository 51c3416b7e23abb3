import { performance } from 'node:perf_hooks';

/**
 * How long large answers may work within one turn of the event loop, all connections together. Each
 * answer already yields a turn between its slices; but a hundred requests arriving in the same poll
 * each make their first slice in that poll's callbacks, one after another, before any other request is
 * read (measured: one /healthz waited 95 ms behind 100 changelog requests of ~1 ms each). With a shared
 * budget, work past it waits for the next turn, so a turn costs about the budget plus one slice.
 */
const TURN_BUDGET_MS = 8;

let turnStarted = 0;
let turnOpen = false;

function closeTurn(): void {
  turnOpen = false;
}

/**
 * Resolves at once while this turn's budget lasts, and in a later turn once it is spent. Call it
 * before each unit of work a large answer does (making a slice, reading a chunk).
 */
export function fairTurn(): Promise<void> | undefined {
  const now = performance.now();
  if (!turnOpen) {
    // The turn ends at the event loop's next check phase: setImmediate runs its callbacks in order, so
    // this runs before the work that waited for that turn.
    turnOpen = true;
    turnStarted = now;
    setImmediate(closeTurn);
    return undefined;
  }
  if (now - turnStarted < TURN_BUDGET_MS) return undefined;
  return new Promise((resolve) => { setImmediate(resolve); });
}
