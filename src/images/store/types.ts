// What every image store answers, apart from index.ts, which picks one: file.ts and s3.ts import these
// without importing the file that loads them.

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
