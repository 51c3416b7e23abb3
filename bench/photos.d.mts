/** Types of bench/photos.mjs for the tests that use it. */
export function photoJpeg(seed: number, options?: { width?: number; height?: number; quality?: number; exif?: Record<string, Record<string, string>> }): Promise<Buffer>;
export function variant(jpeg: Buffer, n: number): Buffer;
export function cachedPhotos(seeds: number[]): Buffer[];
