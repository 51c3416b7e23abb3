import { readdirSync, readFileSync } from 'node:fs';
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { deriveImage } from '../../src/images/derive.js';
import { IMAGE_THREAD_NICE, lowerImageThreadsPriority } from '../../src/images/priority.js';
import { photoJpeg } from '../../bench/photos.mjs';

/** Each thread of this process: its id, name and nice value (/proc/self/task/TID/stat, field 19). */
function threads(): { tid: number; name: string; nice: number }[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [{ tid: Number(tid), name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(), nice: Number(fields[16]) }];
    } catch {
      return [];
    }
  });
}

describe.runIf(process.platform === 'linux')('image threads yield their cores to the event loop', () => {
  test('libuv\'s pool and libvips\' workers run at nice 10 once an image is on its way; the event loop\'s thread keeps its priority', async () => {
    // libuv's pool exists once anything has used it; libvips starts its workers with the first image.
    await promisify(gzip)(Buffer.alloc(1024));
    // The event loop's thread is the process's first thread, whose id is the process id. (Not the first entry of
    // /proc/self/task: ids wrap at pid_max, so a thread started later can have a smaller id and be listed first.)
    const main = () => threads().find((t) => t.tid === process.pid)!;
    const mainBefore = main();
    lowerImageThreadsPriority();
    await deriveImage(await photoJpeg(3, { width: 1200, height: 800 }));
    lowerImageThreadsPriority();
    const all = threads();
    const pool = all.filter((t) => t.name === 'libuv-worker');
    const vips = all.filter((t) => t.name === 'libvips worker');
    expect(pool.length).toBeGreaterThan(0);
    expect(vips.length).toBeGreaterThan(0);
    for (const t of [...pool, ...vips]) expect(t.nice, t.name).toBe(IMAGE_THREAD_NICE);
    expect(main().nice).toBe(mainBefore.nice);
    expect(main().nice).toBeLessThan(IMAGE_THREAD_NICE);
  });
});
