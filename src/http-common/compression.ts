import { brotliCompress, constants, gzip } from 'node:zlib';
import negotiate from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import pLimit from 'p-limit';

/** The content codings the service sends (docs/api.md, Compression), best first. */
export const ENCODINGS = ['br', 'gzip'] as const;
export type Encoding = (typeof ENCODINGS)[number];

/** Answers smaller than this are sent as they are (docs/api.md, Compression). */
export const COMPRESS_MIN_BYTES = 1024;

/**
 * Answers up to this size are compressed in one call on the event loop, larger ones through a zlib
 * stream whose compression runs on libuv's pool. The stream's own machinery (a Readable made of the
 * text, a pipeline, a chunked write) cost the event loop more than it spares it: ~1 ms of the
 * process's CPU for a batch of 100 artworks' 24 KB answer, which gzip 6 compresses in one call in
 * ~0.6 ms and brotli 4 in ~0.4 (docs/performance.md, Writes, lists and growth). At 64 KiB one call
 * holds the loop ~1.7 ms at most; the plugin's own default on 2 cores is 8 KB.
 */
export const COMPRESS_SYNC_MAX_BYTES = 64 * 1024;

/** The media types worth compressing: text, JSON and XML; images and other binary formats are compressed already. */
export const COMPRESSIBLE_TYPE = /^text\/|^application\/(?:[\w.+-]+\+)?(?:json|xml)(?:;|$)/;

/** The coding a client's Accept-Encoding takes for an answer this large, or undefined for the plain bytes. */
export function acceptedEncoding(acceptEncoding: string | undefined, bytes: number): Encoding | undefined {
  if (!acceptEncoding || bytes < COMPRESS_MIN_BYTES) return undefined;
  return negotiate(acceptEncoding, ENCODINGS as unknown as Encoding[]) ?? undefined;
}

/**
 * Brotli quality 4 and gzip level 6, chosen on measurement (bench/compression-levels.mjs,
 * docs/performance.md): on a 45.8 KB changelog page brotli 4 makes 3.2 KB in ~0.6 ms, as small as
 * qualities 5 to 9 (up to 40 × slower); quality 11, zlib's default, saves 12 % more at ~450 × the time.
 */
export const BROTLI_QUALITY = 4;
export const GZIP_LEVEL = 6;
/**
 * Brotli's window: 2^18 = 256 KiB instead of 4 MiB. An encoder's memory grows with it, and up to one
 * per connection may be at work; API answers are far smaller than the window anyway.
 */
export const BROTLI_WINDOW_BITS = 18;

/** Bytes kept for sending again, and their compressed copies. */
export interface Compressible {
  body: Buffer;
  /** Copies made or being made, one per coding. */
  encoded: Partial<Record<Encoding, Promise<Buffer>>>;
}

const compressors: Record<Encoding, (body: Buffer, done: (error: Error | null, result: Buffer) => void) => void> = {
  br: (body, done) => brotliCompress(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_LGWIN]: BROTLI_WINDOW_BITS,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  }, done),
  gzip: (body, done) => gzip(body, { level: GZIP_LEVEL }, done),
};

/**
 * Compresses in one call on libuv's thread pool, never on the event loop, at most COMPRESSING_MAX at
 * a time (the pool's size): an encoder's memory is taken when its call is made, not when a thread
 * runs it, so queued calls would each hold one. Kept answers share one call per coding, which is
 * what keeps memory flat under load (docs/performance.md).
 */
const COMPRESSING_MAX = 4;
const compressing = pLimit(COMPRESSING_MAX);

export function compressed(body: Buffer, encoding: Encoding): Promise<Buffer> {
  return compressing(() => new Promise<Buffer>((resolve, reject) => {
    compressors[encoding](body, (error, result) => (error ? reject(error) : resolve(result)));
  }));
}

/**
 * A kept answer's bytes in the coding the client takes (its Content-Encoding and Vary set on the
 * reply), or plain. The API's kept answers (http/conditional/answer-cache.ts) and the public pages' share it.
 */
export async function bytesFor(request: FastifyRequest, reply: FastifyReply, kept: Compressible): Promise<Buffer> {
  const encoding = acceptedEncoding(request.headers['accept-encoding'], kept.body.length);
  if (!encoding) return kept.body;
  const copy = await encodedCopy(kept, encoding);
  // The compressor's onSend leaves an answer that has its coding already.
  reply.header('content-encoding', encoding).header('vary', 'accept-encoding');
  return copy;
}

/** The answer's copy in `encoding`, made once and shared by the requests that ask for it meanwhile. */
function encodedCopy(answer: Compressible, encoding: Encoding): Promise<Buffer> {
  let copy = answer.encoded[encoding];
  if (!copy) {
    copy = compressed(answer.body, encoding);
    answer.encoded[encoding] = copy;
    // A failed copy is not kept: the next request tries again.
    copy.catch(() => { delete answer.encoded[encoding]; });
  }
  return copy;
}
