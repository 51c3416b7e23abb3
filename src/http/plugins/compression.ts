import { constants } from 'node:zlib';
import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import {
  BROTLI_QUALITY, BROTLI_WINDOW_BITS, COMPRESSIBLE_TYPE, COMPRESS_MIN_BYTES, COMPRESS_SYNC_MAX_BYTES, ENCODINGS, GZIP_LEVEL,
} from '../../http-common/compression.js';

/**
 * Text answers of 1 KiB or more in brotli or gzip when the client takes them (docs/api.md, Compression): API JSON,
 * public pages, feeds, sitemaps, OpenAPI. Images (already compressed formats) and small answers go as
 * they are. Answers up to COMPRESS_SYNC_MAX_BYTES (64 KiB) are compressed in one call, larger ones
 * through a zlib stream, which runs on libuv's thread pool, not on the event loop. A
 * client that sends no Accept-Encoding costs one header look-up. Compressed request bodies are not
 * accepted (the contract's bodies are JSON). Answers kept for sending again (the API's answer cache,
 * public pages and feeds) keep their compressed copies too and arrive here coded already.
 */
async function compressionPlugin(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    encodings: [...ENCODINGS],
    threshold: COMPRESS_MIN_BYTES,
    syncThreshold: COMPRESS_SYNC_MAX_BYTES,
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_LGWIN]: BROTLI_WINDOW_BITS } },
    zlibOptions: { level: GZIP_LEVEL },
    customTypes: COMPRESSIBLE_TYPE,
    globalDecompression: false,
  });
}

export default fp(compressionPlugin, { name: 'compression' });
