import type { TSchema } from 'typebox';
import { Artwork, ArtworkList, ArtworkListItem, ArtworkPostResult, ArtworkView, Deleted } from './artworks.js';
import { BatchItemResult, BatchResponse } from './batch.js';
import { ChangelogEntry, ChangelogPage } from './changelog.js';
import { ErrorBody } from './common.js';
import { Event, EventList, EventListItem, EventPostResult } from './events.js';
import { Feed, FeedList, FeedPreview, FeedRun, FeedRunList, RunList } from './feeds.js';
import { Health, HealthUnavailable, MetricsText } from './operations.js';
import { Image, ImageBytes } from './images.js';
import { Me } from './me.js';
import { Profile, ProfileUpdated } from './profile.js';
import { SyncStatus } from './sync.js';
import { TrashItem, TrashPage } from './trash.js';
import { WebhookAttempt, WebhookEndpoint, WebhookEndpointWithSecret, WebhookList, WebhookMessage, WebhookMessagePage } from './webhooks.js';

/**
 * Every named model of the API, each with an `$id`: registered once as a Fastify shared schema (the
 * serializers resolve `Ref`s to them) and emitted as `components.schemas` of the OpenAPI document.
 */
export const COMPONENTS: readonly TSchema[] = [
  Image, ArtworkView, Artwork, ArtworkListItem, ArtworkList, ArtworkPostResult, Deleted,
  Event, EventListItem, EventList, EventPostResult,
  Profile, ProfileUpdated,
  ChangelogEntry, ChangelogPage, SyncStatus,
  BatchItemResult, BatchResponse,
  WebhookEndpoint, WebhookEndpointWithSecret, WebhookList, WebhookAttempt, WebhookMessage, WebhookMessagePage,
  FeedRun, Feed, FeedList, FeedRunList, FeedPreview, RunList,
  TrashItem, TrashPage,
  Me, Health, HealthUnavailable, MetricsText, ImageBytes, ErrorBody,
];
