import { createHash } from 'node:crypto';

/**
 * The URL as the tag names it: the path without a trailing slash and the query's parameters in name
 * order, so `?after=0&limit=5` and `?limit=5&after=0` share their answers.
 */
export function normalizedUrl(url: string): string {
  const [rawPath, search] = url.split('?', 2) as [string, string?];
  const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
  if (!search) return path;
  const params = new URLSearchParams(search);
  params.sort();
  return `${path}?${params.toString()}`;
}

/**
 * A strong tag for one entity's answer at one data version: the entity id and version in clear (two
 * entities never share a tag), the URL and anything else the answer depends on as a short hash.
 */
export function entityTag(entityId: number, version: string, ...parts: string[]): string {
  return `"${entityId}-${version}-${digestOf(parts.join('\n'))}"`;
}

const digestOf = (text: string): string => createHash('sha256').update(text).digest('base64url').slice(0, 16);

/** Digests of the URLs seen lately, by the URL as sent: pollers ask for the same few URLs again and again. */
const urlDigests = new Map<string, string>();
const URL_DIGESTS_MAX = 10_000;

/** entityTag for a URL (normalized) and what else the answer depends on, at one data version. */
export function urlTag(entityId: number, version: string, url: string, extra: string): string {
  // The URL alone when nothing else counts (most routes, every early answer): no string built per
  // request. A URL holds no newline, so it names no pair of a URL and extras.
  const key = extra === '' ? url : `${url}\n${extra}`;
  let digest = urlDigests.get(key);
  if (digest === undefined) {
    digest = digestOf(`${normalizedUrl(url)}\n${extra}`);
    if (urlDigests.size >= URL_DIGESTS_MAX) urlDigests.clear();
    urlDigests.set(key, digest);
  }
  return `"${entityId}-${version}-${digest}"`;
}
