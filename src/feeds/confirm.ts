import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { removeRecord } from '../importer/index.js';
import { findEntity } from '../store/entities.js';
import { claimConfirmDeletes, recordConfirmedDeletes, recordState, type FeedRunRow, type RunOutcome } from '../store/feeds.js';
import type { Db } from '../db/types.js';
import { notFound } from '../domain/errors.js';

/**
 * A person confirms a mirror run's mass delete (docs/api.md, Feeds: mass deletes): exactly the records
 * the run listed go to the trash, through the mirror's own delete, as writes of that run (`feed:<id>`,
 * its `run_id`); the file is not read again. A record changed since the run (or gone) is skipped and
 * listed in the run's problems. Resolves with the run as it then is.
 */
export async function confirmDeletes(db: Db, entityId: number, feedId: number, runId: number): Promise<FeedRunRow> {
  const { feed, run, pending } = await claimConfirmDeletes(db, entityId, feedId, runId);
  const entity = await findEntity(db, entityId);
  if (!entity) throw notFound('Feed');
  const actor = { entityId, entitySlug: entity.slug, source: `feed:${feed.id}`, runId: run.id, feedId: feed.id };
  const ranUntil = run.finished_at ?? '';
  const skipped: RunOutcome['problems'] = [];
  let deleted = 0;
  for (const [i, record] of pending.entries()) {
    const state = await recordState(db, feed.kind, entityId, record.id);
    const why = !state ? 'gone since the run'
      : state.updated_at > ranUntil || state.feed_id !== feed.id ? 'changed since the run' : null;
    if (why === null && await removeRecord(db, actor, feed.kind, record.id)) deleted++;
    else skipped.push({ line: null, column: null, message: `#${record.id} "${record.title}" not deleted: ${why ?? 'gone since the run'}` });
    if (i % 20 === 19) await yieldToEventLoop();
  }
  return recordConfirmedDeletes(db, run, deleted, skipped);
}
