import { randomBytes } from 'node:crypto';
import { mkdir, open, opendir, readdir, rename, rm, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import type { ImageStore, StoredImage, StoredImageInfo } from './types.js';
import { checkName } from './names.js';

/** What a file's extension says it holds (a folder keeps no other metadata). */
const TYPES: Record<string, string> = {
  '.avif': 'image/avif', '.webp': 'image/webp', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.png': 'image/png', '.gif': 'image/gif',
};
/** Temporary files start with this; `list` skips them and names may not start with a dot. */
const TEMP = '.tmp-';

/**
 * Derivatives as files in a folder (IMAGE_STORE=file:PATH), for one machine. Files are spread over
 * 256 subfolders by the first two characters of the name (content hashes, so evenly), which keeps
 * each folder small at millions of files. A file is written under a temporary name, flushed to
 * disk and renamed into place: readers see the whole file or none, even after a crash.
 */
export class FileImageStore implements ImageStore {
  readonly root: string;

  constructor(path: string) {
    this.root = resolve(path);
  }

  private path(name: string): string {
    checkName(name);
    return join(this.root, name.slice(0, 2), name);
  }

  async has(name: string): Promise<boolean> {
    return (await stat(this.path(name)).catch(missing))?.isFile() ?? false;
  }

  async put(name: string, bytes: Buffer, _contentType: string): Promise<void> {
    const path = this.path(name);
    const folder = join(this.root, name.slice(0, 2));
    await mkdir(folder, { recursive: true });
    const temp = join(folder, `${TEMP}${randomBytes(8).toString('hex')}`);
    try {
      const file = await open(temp, 'w');
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async get(name: string): Promise<StoredImage | null> {
    const path = this.path(name);
    // Opened before its size is read: a delete in between leaves this reader its whole file.
    const file = await open(path, 'r').catch(missing);
    if (!file) return null;
    try {
      const { size } = await file.stat();
      return { body: file.createReadStream(), size, contentType: contentType(name) };
    } catch (error) {
      await file.close();
      throw error;
    }
  }

  async head(name: string): Promise<StoredImageInfo | null> {
    const found = await stat(this.path(name)).catch(missing);
    return found?.isFile() ? { size: found.size, contentType: contentType(name) } : null;
  }

  async delete(name: string): Promise<void> {
    await rm(this.path(name), { force: true });
  }

  async *list(): AsyncIterable<string> {
    const folders = await readdir(this.root, { withFileTypes: true }).catch(missing);
    for (const folder of folders ?? []) {
      if (!folder.isDirectory()) continue;
      for await (const entry of await opendir(join(this.root, folder.name))) {
        // Only files where put() would write them: another tool's file elsewhere is not a name of this store.
        if (entry.isFile() && !entry.name.startsWith(TEMP) && entry.name.slice(0, 2) === folder.name) yield entry.name;
      }
    }
  }

  async close(): Promise<void> {}
}

function contentType(name: string): string {
  return TYPES[extname(name)] ?? 'application/octet-stream';
}

/** undefined for "no such file", the error otherwise. */
function missing(error: unknown): undefined {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  throw error;
}
