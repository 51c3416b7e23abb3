import { createInflateRaw } from 'node:zlib';
import { XLSX_MAX_CELLS, XLSX_MAX_INFLATED_BYTES, XLSX_MAX_RATIO, XLSX_MAX_SHARED_STRINGS, XLSX_RATIO_FROM_BYTES, megabytes } from './limits.js';
import { FileProblem } from './problem.js';

/**
 * An .xlsx file is a zip archive, and a zip archive can be a bomb: kilobytes that inflate to
 * gigabytes. Before an Excel reader sees the bytes, the archive's directory is read (the sizes each part
 * declares, in all and as a ratio), then every part is inflated once as a stream, counting bytes and
 * keeping none, and stopped as soon as it outgrows what it declared. Only an archive whose parts are
 * what they say reaches the reader, so the reader's memory is bounded by the limits of limits.ts.
 */

interface Part {
  name: string;
  method: number;
  compressed: number;
  inflated: number;
  localHeader: number;
}

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const MAX_PARTS = 10_000;

const bomb = (why: string) => new FileProblem(`not a usable Excel file: ${why} (an .xlsx may inflate to at most ${megabytes(XLSX_MAX_INFLATED_BYTES)})`);

export async function checkArchive(bytes: Buffer): Promise<void> {
  const parts = directory(bytes);
  let declared = 0;
  for (const part of parts) {
    declared += part.inflated;
    if (declared > XLSX_MAX_INFLATED_BYTES) throw bomb(`its parts declare more than ${megabytes(XLSX_MAX_INFLATED_BYTES)} when inflated`);
    if (part.inflated > XLSX_RATIO_FROM_BYTES && part.inflated > part.compressed * XLSX_MAX_RATIO) {
      throw bomb(`the part ${JSON.stringify(part.name.slice(0, 100))} inflates ${Math.round(part.inflated / Math.max(1, part.compressed))} times`);
    }
  }
  const counts = { cells: 0, strings: 0 };
  for (const part of parts) await checkInflatedSize(bytes, part, counts);
}

/**
 * What an Excel reader would make objects of, counted in the inflated XML as it streams past: the
 * cells of every sheet (`<c ` elements) and the shared strings (`<si>`), bounded before the workbook
 * is loaded (docs/api.md, Bounds on what a file may hold).
 */
interface Counts { cells: number; strings: number }
const COUNTED: { part: RegExp; tag: Buffer; key: keyof Counts; most: number; what: string }[] = [
  { part: /^xl\/worksheets\/[^/]+\.xml$/i, tag: Buffer.from('<c '), key: 'cells', most: XLSX_MAX_CELLS, what: 'cells' },
  { part: /^xl\/sharedStrings\.xml$/i, tag: Buffer.from('<si>'), key: 'strings', most: XLSX_MAX_SHARED_STRINGS, what: 'shared strings' },
];

/** Occurrences of `tag` in a stream's chunks, one counted once even when split between two chunks. */
function tagCounter(tag: Buffer): (chunk: Buffer) => number {
  let tail = Buffer.alloc(0);
  return (chunk) => {
    const text = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
    let found = 0;
    for (let at = text.indexOf(tag); at >= 0; at = text.indexOf(tag, at + tag.length)) found++;
    // The last bytes that could start a tag are kept for the next chunk; no whole tag lies in them.
    tail = Buffer.from(text.subarray(Math.max(0, text.length - (tag.length - 1))));
    return found;
  };
}

/** The archive's central directory: where each part is and the sizes it declares. */
function directory(bytes: Buffer): Part[] {
  const end = findEndOfDirectory(bytes);
  const count = bytes.readUInt16LE(end + 10);
  const offset = bytes.readUInt32LE(end + 16);
  if (count === 0xffff || offset === 0xffffffff) throw bomb('it is a zip64 archive, which no spreadsheet of this size needs');
  if (count > MAX_PARTS) throw bomb(`it has ${count} parts`);
  const parts: Part[] = [];
  let at = offset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== DIRECTORY_ENTRY) throw new FileProblem('not a readable Excel file: its zip directory is damaged');
    const nameLength = bytes.readUInt16LE(at + 28);
    const part: Part = {
      method: bytes.readUInt16LE(at + 10),
      compressed: bytes.readUInt32LE(at + 20),
      inflated: bytes.readUInt32LE(at + 24),
      localHeader: bytes.readUInt32LE(at + 42),
      name: bytes.toString('utf8', at + 46, Math.min(bytes.length, at + 46 + nameLength)),
    };
    if (part.compressed === 0xffffffff || part.inflated === 0xffffffff) throw bomb('it is a zip64 archive, which no spreadsheet of this size needs');
    parts.push(part);
    at += 46 + nameLength + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
  }
  return parts;
}

function findEndOfDirectory(bytes: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65,535.
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 0xffff); at--) {
    if (bytes.readUInt32LE(at) === END_OF_DIRECTORY) return at;
  }
  throw new FileProblem('not a readable Excel file: no zip directory (is the file complete?)');
}

/** Inflates one part as a stream, off the event loop, holding no output; refuses it once it outgrows its declared size. */
async function checkInflatedSize(bytes: Buffer, part: Part, counts: Counts): Promise<void> {
  const at = part.localHeader;
  if (at + 30 > bytes.length || bytes.readUInt32LE(at) !== LOCAL_HEADER) throw new FileProblem('not a readable Excel file: a zip entry is damaged');
  const start = at + 30 + bytes.readUInt16LE(at + 26) + bytes.readUInt16LE(at + 28);
  const data = bytes.subarray(start, start + part.compressed);
  const counted = COUNTED.find((c) => c.part.test(part.name));
  const count = counted && tagCounter(counted.tag);
  const tally = (chunk: Buffer): FileProblem | undefined => {
    if (!counted || !count) return undefined;
    counts[counted.key] += count(chunk);
    if (counts[counted.key] <= counted.most) return undefined;
    return new FileProblem(`the workbook holds more than ${counted.most.toLocaleString('en-US')} ${counted.what}, more than one import may read; split it into several files`);
  };
  if (part.method === 0) {
    if (data.length !== part.inflated) throw new FileProblem('not a readable Excel file: a stored zip entry has the wrong size');
    const problem = tally(data);
    if (problem) throw problem;
    return;
  }
  if (part.method !== 8) throw new FileProblem(`not a readable Excel file: zip compression method ${part.method} is not one spreadsheets use`);
  await new Promise<void>((resolve, reject) => {
    const inflate = createInflateRaw();
    let seen = 0;
    inflate.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      const problem = seen > part.inflated
        ? bomb(`the part ${JSON.stringify(part.name.slice(0, 100))} inflates to more than the ${part.inflated} bytes it declares`)
        : tally(chunk);
      if (problem) {
        inflate.destroy();
        reject(problem);
      }
    });
    inflate.on('error', () => reject(new FileProblem('not a readable Excel file: a zip entry does not inflate')));
    inflate.on('end', () => (seen === part.inflated ? resolve() : reject(new FileProblem('not a readable Excel file: a zip entry is shorter than it declares'))));
    inflate.end(data);
  });
}
