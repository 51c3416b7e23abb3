import { FileImageStore } from './file.js';
import { parseImageStore } from './location.js';
import type { S3Settings } from './s3.js';
import type { ImageStore } from './types.js';

export type { S3Settings } from './s3.js';
export { parseImageStore, type ImageStoreLocation } from './location.js';
export type { ImageStore, StoredImage, StoredImageInfo } from './types.js';

export interface ImageStoreConfig {
  /** IMAGE_STORE: `file:PATH` or `s3://bucket/prefix` (config.ts checks the form). */
  imageStore: string;
  s3?: S3Settings;
}

export function openImageStore(config: ImageStoreConfig): ImageStore {
  const location = parseImageStore(config.imageStore);
  return location.kind === 'file'
    ? new FileImageStore(location.path)
    : new LazyS3ImageStore({ ...config.s3, bucket: location.bucket, prefix: location.prefix });
}

/**
 * The S3 store, loaded with its first use: the AWS SDK costs a process ~30 MB resident (measured:
 * importing @aws-sdk/client-s3 into a fresh Node 24), which a server on a folder store, or one that
 * is not asked for an image, does not pay.
 */
class LazyS3ImageStore implements ImageStore {
  private store: Promise<ImageStore> | undefined;

  constructor(private readonly settings: S3Settings & { bucket: string; prefix: string }) {}

  private open(): Promise<ImageStore> {
    this.store ??= import('./s3.js').then(({ S3ImageStore }) => new S3ImageStore(this.settings));
    return this.store;
  }

  async has(name: string) { return (await this.open()).has(name); }
  async put(name: string, bytes: Buffer, contentType: string) { return (await this.open()).put(name, bytes, contentType); }
  async get(name: string) { return (await this.open()).get(name); }
  async head(name: string) { return (await this.open()).head(name); }
  async delete(name: string) { return (await this.open()).delete(name); }
  async *list() { yield* (await this.open()).list(); }
  async close() { if (this.store) await (await this.store).close(); }
}
