import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface LocalS3 {
  /** e.g. http://127.0.0.1:40123 */
  endpoint: string;
  bucket: string;
  /** The service's settings for this server: IMAGE_STORE (with `prefix`), S3_ENDPOINT, AWS_*. */
  env(prefix?: string): Record<string, string>;
  close(): Promise<void>;
}

/** The only credentials s3rver accepts; it checks request signatures with them like S3 does. */
const KEY = 'S3RVER';

/**
 * A real S3-compatible server on this machine (s3rver: the S3 REST API over a folder), on a free
 * port, with one empty bucket, for tests of the S3 image store and of several processes sharing it.
 * `close` stops it and removes its folder.
 */
export async function startS3(bucket = 'images'): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'art-catalog-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint, bucket,
    env: (prefix = 'derivatives') => ({
      IMAGE_STORE: `s3://${bucket}/${prefix}`, S3_ENDPOINT: endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: KEY, AWS_SECRET_ACCESS_KEY: KEY,
    }),
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
