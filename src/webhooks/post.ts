import { FetchFailed, fetchUrl, type KeptConnections } from '../fetch/index.js';
import type { Post } from './deliver.js';

/**
 * A webhook POST through the one outgoing fetcher (src/fetch): its address policy (literal, resolved
 * and connected addresses checked), no redirect followed (a redirect is answered as its status, which
 * fails the attempt), `timeoutMs` for the whole exchange, the answer read to `maxBytes` whatever its
 * status. A connection whose answer was read to its end is kept for the endpoint's next messages
 * (`connections`, opened under their policy); any other is destroyed when the attempt ends
 * (docs/api.md, Webhooks).
 */
export function guardedPost(connections: KeptConnections, abandon?: AbortSignal): Post {
  return async ({ url, headers, body, timeoutMs, maxBytes }) => {
    try {
      const answer = await fetchUrl({
        url, method: 'POST', headers, body, maxRedirects: 0, maxBytes, overflow: 'truncate', readErrorBody: true, timeoutMs,
        connections, ...(abandon ? { signal: abandon } : {}),
      });
      return { status: answer.status, body: answer.body };
    } catch (error) {
      if (error instanceof FetchFailed && error.status !== undefined) return { status: error.status, body: Buffer.alloc(0) };
      throw error;
    }
  };
}
