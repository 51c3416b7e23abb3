import type { FastifyInstance } from 'fastify';
import { catalogCounts, imageCounts, recentChanges } from '../../store/console.js';
import { withoutQuery } from '../../feeds/present.js';
import { listFeeds, type FeedWithRun } from '../../store/feeds.js';
import { html, type Html } from '../../web/html.js';
import { changeList } from '../changes.js';
import { mayAct } from '../guard.js';
import { heading, render, when } from '../layout.js';

/** The console's first page: how the catalog stands and what changed last (docs/console.md, Overview). */
export async function overviewPage(app: FastifyInstance): Promise<void> {
  app.get('/', { config: { role: 'viewer' } }, async (request, reply) => {
    const entityId = request.user.entity.id;
    // The kept counts only: the API's sync status also counts distinct artists, a scan of the catalog.
    const [stats, images, changes, feeds] = await Promise.all([
      catalogCounts(app.db, entityId),
      
      imageCounts(app.db, entityId),
      recentChanges(app.db, entityId, { before: 0, limit: 20 }),
      listFeeds(app.db, entityId),
    ]);
    const stat = (label: string, count: number, synced: string | null, sub?: string | Html) =>
      html`<div class="stat"><dt>${label}</dt><dd>${count.toLocaleString('en')}<span class="sub">${sub ?? html`last sync ${when(synced)}`}</span></dd></div>`;
    return render(request, reply, {
      title: 'Overview', section: 'overview',
      body: html`${heading('Overview', html`${request.user.entity.name}'s catalog at a glance.`)}
<h2 class="visually-hidden">Sync status</h2>
<dl class="stats">${stat('Artworks', stats.artworks, stats.artworks_synced_at)}${stat('Events', stats.events, stats.events_synced_at)}
${stat('Available', stats.available, null, 'artworks for sale')}${stat('Sold', stats.sold, null, `${stats.reserved.toLocaleString('en')} reserved`)}
${stat('Images ready', images.ready, null, html`<a href="/console/artworks?image_status=pending">${images.pending.toLocaleString('en')} pending</a> · <a href="/console/artworks?image_status=failed">${images.failed.toLocaleString('en')} failed</a>`)}</dl>
${feedTrouble(feeds, mayAct(request.user, 'editor'))}
<h2>Latest changes</h2>
${changeList(changes.rows)}
${changes.nextBefore ? html`<p><a href="/console/changelog">The whole changelog</a></p>` : ''}`,
    });
  });
}

/** Feeds that failed, need attention or were paused after failing (docs/console.md, Feeds), each with its reason. */
function feedTrouble(feeds: FeedWithRun[], fullUrl: boolean): Html | string {
  const troubled = feeds.filter(({ feed, lastRun }) => feed.paused_reason !== null
    || lastRun?.status === 'failed' || lastRun?.status === 'needs_attention');
  if (troubled.length === 0) return '';
  return html`<div class="notice notice-error" role="alert"><h2>Feeds that need you</h2><ul>${troubled.map(({ feed, lastRun }) =>
    html`<li><a href="/console/feeds#feed-${feed.id}">${feed.kind} from ${fullUrl ? feed.url : withoutQuery(feed.url)}</a>: ${feed.paused_reason !== null ? html`paused: ${feed.paused_reason}`
      : lastRun?.status === 'needs_attention' ? html`needs attention: ${lastRun.error ?? ''}` : html`failed: ${lastRun?.error ?? ''}`}</li>`)}</ul></div>`;
}
