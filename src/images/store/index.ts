import { FileImageStore } from './file.js';
import { parseImageStore } from './location.js';
import type { S3Settings } from './s3.js';

export type { S3Settings } from './s3.js';
export { parseImageStore, type ImageStoreLocation } from './location.js';

/** What a HEAD answers about a stored derivative: no body is read. */
export interface StoredImageInfo { size: number; contentType: string }

/** A stored derivative: streamed to the client, never read whole into memory. */
export interface StoredImage extends StoredImageInfo { body: NodeJS.ReadableStream }

/**
 * Where derivatives live (docs/deploy.md, Images: where the derivatives live): a folder for one machine, an S3-compatible bucket for
 * several. Names are flat (`${sha256}-${width}.${ext}`); a store refuses any other shape of name,
 * so no name can reach outside it.
 */
export interface ImageStore {
  has(name: string): Promise<boolean>;
  /** Atomic: a reader sees the whole object or none, never half of it. */
  put(name: string, bytes: Buffer, contentType: string): Promise<void>;
  /** null when there is no such object. */
  get(name: string): Promise<StoredImage | null>;
  /** Its size and type without its bytes (HEAD, `If-None-Match: *`); null when there is no such object. */
  head(name: string): Promise<StoredImageInfo | null>;
  /** A missing name is fine. */
  delete(name: string): Promise<void>;
  /** Every stored name (for the sweep); may include other tools' objects sharing the location: the sweep filters. */
  list(): AsyncIterable<string>;
  close(): Promise<void>;
}

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
