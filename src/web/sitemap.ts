import type { EntityRow } from '../db/types.js';
import { SITEMAP_PART_SIZE, type ActiveEntity, type Dated } from '../store/public.js';
import { escapeHtml } from './html.js';
import { artworkPath, eventPath, profilePath } from './format.js';

/** robots.txt: every public page may be crawled, the API may not; where the sitemap is. */
export const robotsTxt = (baseUrl: string): string =>
  `User-agent: *\nAllow: /\nDisallow: /v1/\nDisallow: /docs\n\nSitemap: ${baseUrl}/sitemap.xml\n`;

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';
const url = (loc: string, lastmod?: string) =>
  `<url><loc>${escapeHtml(loc)}</loc>${lastmod ? `<lastmod>${lastmod.slice(0, 10)}</lastmod>` : ''}</url>`;

/** How many sitemap files an entity's pages take (artworks in slices of SITEMAP_PART_SIZE; at least one). */
export const sitemapParts = (artworks: number): number => Math.max(1, Math.ceil(artworks / SITEMAP_PART_SIZE));

/** The sitemap index: every part of every active entity's sitemap (paused entities are not listed). */
export function sitemapIndex(entities: ActiveEntity[], baseUrl: string): string {
  const entries = entities.flatMap((e) => Array.from({ length: sitemapParts(e.artworks) }, (_, i) =>
    `<sitemap><loc>${escapeHtml(`${baseUrl}${profilePath(e.slug)}/sitemap.xml${i ? `?part=${i + 1}` : ''}`)}</loc><lastmod>${e.lastModified.slice(0, 10)}</lastmod></sitemap>`));
  return `${XML_HEAD}<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries.join('\n')}\n</sitemapindex>\n`;
}

/**
 * One part of an entity's sitemap: the first holds the profile's pages and its events, every part a
 * slice of its artworks' pages.
 */
export function sitemapPart(entity: EntityRow, records: { artworks: Dated[]; events: Dated[] }, part: number, baseUrl: string, pageSize: number): string {
  const profile = `${baseUrl}${profilePath(entity.slug)}`;
  const total = records.artworks.length + (part - 1) * SITEMAP_PART_SIZE;
  const pages = part === 1 ? Array.from({ length: Math.max(1, Math.ceil(total / pageSize)) }, (_, i) => url(i ? `${profile}?page=${i + 1}` : profile, i ? undefined : entity.updated_at)) : [];
  const urls = [
    ...pages,
    ...records.events.map((e) => url(`${baseUrl}${eventPath(entity.slug, e.key)}`, e.updated_at)),
    ...records.artworks.map((a) => url(`${baseUrl}${artworkPath(entity.slug, Number(a.key))}`, a.updated_at)),
  ];
  return `${XML_HEAD}<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join('\n')}\n</urlset>\n`;
}
