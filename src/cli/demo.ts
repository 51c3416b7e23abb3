import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { artworkFromPost } from '../domain/artwork.js';
import { eventFromPost } from '../domain/event.js';
import type { ArtworkPostBody } from '../schemas/artworks.js';
import type { EventPostBody } from '../schemas/events.js';
import { postArtwork } from '../store/artworks.js';
import { slugify } from '../domain/slug.js';
import { createEntity, findEntityBySlug, updateProfile } from '../store/entities.js';
import { postEvent } from '../store/events.js';
import { createKey } from '../store/keys.js';
import { TIER_SCOPES } from '../domain/keys.js';
import { CliError, output, withDatabase } from './context.js';
import { cliIo } from './io.js';
import { DAY_MS } from '../domain/days.js';

const ARTWORKS: ArtworkPostBody[] = [
  { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990, medium: 'Oil on canvas', dimensions: '225 x 200 cm', price: 1200000, currency: 'EUR', availability: 'available' },
  { title: 'Infinity Nets', artist_name: '草間彌生', creation_year: 2009, medium: 'Acrylic on canvas', dimensions: '194 x 194 cm', price: 850000, currency: 'USD', availability: 'reserved' },
  { title: 'Universe 5-IV-71 #200', artist_name: '김환기', creation_year: 1971, medium: 'Oil on cotton', dimensions: '254 x 254 cm', availability: 'sold' },
  { title: 'Nachtstück', artist_name: 'Käthe Kollwitz', creation_year: 1925, medium: 'Woodcut', dimensions: '35 x 45 cm', price: 18000, currency: 'EUR', availability: 'available' },
  { title: 'Blue Composition', artist_name: 'Sophie Taeuber-Arp', creation_year: 1932, medium: 'Gouache on paper', price: 240000, currency: 'CHF', availability: 'available' },
  { title: 'Øresund Light', artist_name: 'Vilhelm Hammershøi', creation_year: 1900, medium: 'Oil on canvas', price: 650000, currency: 'DKK', availability: 'available' },
  { title: 'Untitled (Red)', artist_name: 'Mark Rothko', creation_year: 1956, medium: 'Oil on canvas', availability: 'sold' },
  { title: 'Study for a Portrait', artist_name: 'Francis Bacon', creation_year: 1953, medium: 'Oil on canvas', price: 3500000, currency: 'GBP', availability: 'reserved' },
  { title: 'Field Recording I', artist_name: 'Ana Mendieta', creation_year: 1976, medium: 'Photograph', dimensions: '50 x 40 cm', price: 42000, currency: 'USD', availability: 'available' },
  { title: 'Garden at Giverny', artist_name: 'Claude Monet', creation_year: 1902, medium: 'Oil on canvas', availability: 'sold' },
];

function events(today = new Date()): EventPostBody[] {
  const day = (offset: number) => new Date(today.getTime() + offset * DAY_MS).toISOString().slice(0, 10);
  return [
    { title: 'Colour and Silence', event_type: 'exhibition', location_city: 'Berlin', location_country: 'DE', start_date: day(10), end_date: day(70), description: 'Paintings from four continents.' },
    { title: 'Opening Night: Colour and Silence', event_type: 'opening', location_city: 'Berlin', location_country: 'DE', start_date: day(10) },
    { title: 'Artist Talk with the Curators', event_type: 'talk', location_city: 'Berlin', location_country: 'DE', start_date: day(24) },
    { title: 'Winter Prints', event_type: 'exhibition', location_city: 'Vienna', location_country: 'AT', start_date: day(-120), end_date: day(-60) },
  ];
}

const DEMO = { type: 'gallery', name: 'Demo Gallery', city: 'Berlin', country: 'DE' } as const;

/**
 * Where the printed page and the profile's `ical_url` point: `--base-url`, else PUBLIC_BASE_URL, else
 * this machine on PORT (not HOST, which may be 0.0.0.0), so the links reach the running server.
 */
export function demoBaseUrl(option: string | undefined, env: NodeJS.ProcessEnv = cliIo().env): string {
  const base = option || env.PUBLIC_BASE_URL || `http://localhost:${loadConfig(env).port}`;
  if (!/^https?:\/\/[^/\s]+/i.test(base)) throw new CliError(`--base-url must be an absolute http(s) URL (got "${base}")`);
  return base.replace(/\/+$/, '');
}

export function registerDemoCommand(program: Command): void {
  program.command('demo')
    .description('seed a demo gallery with artworks and events and print a new subscriber key for it; run again, it refreshes the same gallery')
    .option('--base-url <url>', 'base of the printed page URL and of the gallery\'s ical_url (default: PUBLIC_BASE_URL, else http://localhost:$PORT)')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean; baseUrl?: string }) => {
      const baseUrl = demoBaseUrl(opts.baseUrl);
      const result = await withDatabase(async ({ db }) => {
        // The demo gallery is reused, so running demo again refreshes it instead of adding demo-gallery-2.
        const found = await findEntityBySlug(db, slugify(DEMO.name));
        const entity = found?.type === DEMO.type && found.name === DEMO.name ? found : await createEntity(db, DEMO);
        const { key, row } = await createKey(db, { entityId: entity.id, tier: 'subscriber', scopes: TIER_SCOPES.subscriber, expiresAt: null });
        const actor = { entityId: entity.id, entitySlug: entity.slug, source: `api:${row.prefix}` };
        const pageUrl = `${baseUrl}/profiles/${encodeURIComponent(entity.slug)}`;
        await updateProfile(db, actor, {
          description: 'A demo gallery seeded by `art-catalog demo`.',
          external_url: 'https://gallery.example/',
          ical_url: `${pageUrl}/events.ics`,
        });
        // Posts are upserts: a second run updates the same artworks and moves the events' dates.
        for (const artwork of ARTWORKS) await postArtwork(db, actor, artworkFromPost(artwork));
        for (const event of events()) await postEvent(db, actor, eventFromPost(event));
        return {
          entity: { id: entity.id, type: entity.type, name: entity.name, slug: entity.slug }, key, prefix: row.prefix,
          refreshed: found === entity, public_url: pageUrl, ical_url: `${pageUrl}/events.ics`,
        };
      });
      output(opts.json, { ...result, artworks: ARTWORKS.length, events: events().length }, () => [
        `${result.refreshed ? 'refreshed' : 'seeded'} ${result.entity.name} (id ${result.entity.id}, slug ${result.entity.slug}): ${ARTWORKS.length} artworks, ${events().length} events`,
        `subscriber key: ${result.key}`,
        `public page:    ${result.public_url}`,
        `calendar feed:  ${result.ical_url}`,
      ].join('\n'));
    });
}
