import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { PUSH_MAX_BYTES, megabytes } from './limits.js';
import { FileProblem } from './problem.js';

/**
 * The bytes of a file named on the command line, whatever the name points at: a symlink to /dev/zero
 * (endless), a FIFO nobody writes to (a read that never returns), a directory. It is opened without
 * blocking (a FIFO's open would wait for a writer), checked on the open descriptor (no race between
 * check and read) to be a regular file within the size limit, and read up to that limit only, in case
 * it grows meanwhile.
 */
export async function readRegularFile(path: string, limit = PUSH_MAX_BYTES): Promise<Buffer> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new FileProblem(`not a regular file (${fileType(stat)}): push reads CSV, JSON or Excel files`);
    if (stat.size > limit) throw new FileProblem(`the file holds ${megabytes(stat.size)}, more than the ${megabytes(limit)} push reads; split it into several files`);
    const buffer = Buffer.alloc(stat.size);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

function fileType(stat: { isDirectory(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a file';
}
