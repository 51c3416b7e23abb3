import {
  DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException, paginateListObjectsV2,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import type { ImageStore, StoredImage, StoredImageInfo } from './types.js';
import { checkName } from './names.js';

/** S3_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; unset, the SDK's own defaults apply. */
export interface S3Settings {
  endpoint?: string | undefined;
  region?: string | undefined;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
}

/** A store that hangs must not hold a visitor's request or a worker for long. */
const CONNECT_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Derivatives as objects in an S3-compatible bucket (IMAGE_STORE=s3://bucket/prefix), shared by
 * every process and machine. A PUT is atomic in S3: a reader sees the whole object or none.
 */
export class S3ImageStore implements ImageStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(settings: S3Settings & { bucket: string; prefix: string }) {
    this.bucket = settings.bucket;
    this.prefix = settings.prefix;
    const { endpoint, region, accessKeyId, secretAccessKey } = settings;
    this.client = new S3Client({
      region: region ?? 'us-east-1',
      ...(endpoint ? {
        endpoint,
        // MinIO, Ceph, SeaweedFS and the like name buckets in the path, not in a subdomain.
        forcePathStyle: true,
      } : {}),
      ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
      // SDK v3's default CRC32 checksums on every upload and download are not understood by every
      // S3-compatible server; content is addressed by SHA-256 already, and TLS protects the transfer.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
    });
  }

  private key(name: string): string {
    return this.prefix + checkName(name);
  }

  async has(name: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(name) }));
      return true;
    } catch (error) {
      if (notFound(error)) return false;
      throw error;
    }
  }

  async put(name: string, bytes: Buffer, contentType: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.key(name), Body: bytes, ContentType: contentType }));
  }

  async get(name: string): Promise<StoredImage | null> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(name) }));
      return { body: object.Body as Readable, size: object.ContentLength ?? 0, contentType: object.ContentType ?? 'application/octet-stream' };
    } catch (error) {
      if (notFound(error)) return null;
      throw error;
    }
  }

  async head(name: string): Promise<StoredImageInfo | null> {
    try {
      const object = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(name) }));
      return { size: object.ContentLength ?? 0, contentType: object.ContentType ?? 'application/octet-stream' };
    } catch (error) {
      if (notFound(error)) return null;
      throw error;
    }
  }

  async delete(name: string): Promise<void> {
    // S3 answers 204 for a missing key too.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(name) }));
  }

  async *list(): AsyncIterable<string> {
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket, Prefix: this.prefix })) {
      for (const object of page.Contents ?? []) {
        const name = object.Key?.slice(this.prefix.length);
        // Only the names this store writes: one segment, no deeper "folders" of another tool.
        if (name && !name.includes('/')) yield name;
      }
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

/** No such object; a missing bucket is a configuration error, not a missing image. */
function notFound(error: unknown): boolean {
  return error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404 && error.name !== 'NoSuchBucket';
}
