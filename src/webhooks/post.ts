import http from 'node:http';
import https from 'node:https';
import { FetchFailed, addressGuard, fetchError } from '../images/fetch.js';
import type { Post } from './deliver.js';

/**
 * A webhook POST under the outgoing fetcher's address policy (src/images/fetch.ts `addressGuard`:
 * literal, resolved and connected addresses checked), never following a redirect (a 3xx is an
 * answer like any other, and a failure), within `timeoutMs` for the whole exchange, the answer read
 * to `maxBytes` and the socket destroyed when the attempt ends (docs/api.md, Webhooks).
 */
export function guardedPost(allowed: (address: string) => boolean, abandon?: AbortSignal): Post {
  const guard = addressGuard(allowed);
  return ({ url: text, headers, body, timeoutMs, maxBytes }) => new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      reject(new FetchFailed('not a valid URL'));
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return reject(new FetchFailed('not http or https'));
    if (guard.literalRefused(url)) return reject(new FetchFailed('address not allowed'));
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(abandon ? [abandon] : [])]);
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'POST', lookup: guard.lookup, signal, agent: false,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    }, (response) => {
      const chunks: Buffer[] = [];
      let received = 0;
      const finish = () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) });
      };
      response.on('data', (chunk: Buffer) => {
        const room = maxBytes - received;
        if (room > 0) chunks.push(room >= chunk.length ? chunk : chunk.subarray(0, room));
        received += chunk.length;
        // Read to maxBytes at most: the rest is not waited for.
        if (received >= maxBytes) finish();
      });
      response.once('end', finish);
      response.once('error', (error) => reject(failure(error, signal)));
    });
    guard.watch(request);
    request.once('error', (error) => reject(failure(error, signal)));
    request.end(body);
  });
}

function failure(error: unknown, signal: AbortSignal): FetchFailed {
  if (error instanceof FetchFailed) return error;
  if (signal.aborted) return new FetchFailed('timed out');
  return new FetchFailed(fetchError(error));
}
