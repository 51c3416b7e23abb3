import { FetchFailed, fetchUrl } from '../fetch/index.js';

export { FetchFailed, publicAddress } from '../fetch/index.js';

/**
 * An image's original, fetched through the one outgoing fetcher (src/fetch): at most 3 redirects,
 * `maxBytes`, `timeoutMs` in all, addresses as the fetcher's policy (docs/api.md, Images).
 */
export interface FetchOptions {
  maxBytes: number;
  timeoutMs: number;
  /** Which addresses may be connected to; by default only public ones (`publicAddress`). */
  allowAddress?: (address: string) => boolean;
}

export const MAX_REDIRECTS = 3;

/** An original as fetched: its bytes and their SHA-256 (hex), which names it. */
export interface FetchedImage {
  bytes: Buffer;
  hash: string;
}

/** `abandon`: the caller gave the fetch up (its job was lost); the fetch stops and rejects with its reason. */
export async function fetchImage(url: string, options: FetchOptions, abandon?: AbortSignal): Promise<FetchedImage> {
  const answer = await fetchUrl({
    url, maxRedirects: MAX_REDIRECTS, maxBytes: options.maxBytes, timeoutMs: options.timeoutMs, hash: true,
    headers: { accept: 'image/avif,image/webp,image/*;q=0.9,*/*;q=0.5', 'user-agent': 'ArtCatalogService-ImageFetcher/1' },
    ...(options.allowAddress ? { allowAddress: options.allowAddress } : {}),
    ...(abandon ? { signal: abandon } : {}),
  });
  if (answer.status < 200 || answer.status > 299) throw new FetchFailed(`HTTP ${answer.status}`);
  return { bytes: answer.body, hash: answer.sha256! };
}
