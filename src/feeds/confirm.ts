import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { removeUnchanged } from '../apply/index.js';
import { findEntity } from '../store/entities.js';
import { claimConfirmDeletes, recordConfirmedDeletes, type FeedRunRow, type RunOutcome } from '../store/feeds.js';
import type { Db } from '../db/types.js';
import { notFound } from '../domain/errors.js';

/**
 * A person confirms a mirror run's mass delete (docs/api.md, Feeds: mass deletes): exactly the records
 * the run listed go to the trash, through the mirror's own delete, as writes of that run (`feed:<id>`,
 * its `run_id`); the file is not read again. A record changed since the run, taken by another feed, or
 * gone is skipped (checked in its delete's transaction) and listed in the run's problems. Resolves with
 * the run as it then is.
 */
export async function confirmDeletes(db: Db, entityId: number, feedId: number, runId: number): Promise<FeedRunRow> {
  // Read before the claim: a read that fails then leaves the run's deletions waiting, not claimed by no one.
  const entity = await findEntity(db, entityId);
  if (!entity) throw notFound('Feed');
  const { feed, run, pending } = await claimConfirmDeletes(db, entityId, feedId, runId);
  const actor = { entityId, entitySlug: entity.slug, source: `feed:${feed.id}`, runId: run.id, feedId: feed.id };
  const unchanged = { at: run.finished_at ?? '', feedId: feed.id };
  const skipped: RunOutcome['problems'] = [];
  let deleted = 0;
  for (const [i, record] of pending.entries()) {
    const outcome = await removeUnchanged(db, actor, feed.kind, record.id, unchanged);
    if (outcome === 'deleted') deleted++;
    else skipped.push({ line: null, column: null, message: `#${record.id} "${record.title}" not deleted: ${outcome} since the run`, level: 'warning' });
    if (i % 20 === 19) await yieldToEventLoop();
  }
  return recordConfirmedDeletes(db, run, deleted, skipped);
}
