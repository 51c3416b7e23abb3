import { createInflateRaw } from 'node:zlib';
import { XLSX_MAX_CELLS, XLSX_MAX_INFLATED_BYTES, XLSX_MAX_RATIO, XLSX_MAX_SHARED_STRINGS, XLSX_RATIO_FROM_BYTES, megabytes } from './limits.js';
import { FileProblem } from './problem.js';

/**
 * An .xlsx file is a zip archive, and a zip archive can be a bomb: kilobytes that inflate to gigabytes.
 * Before the Excel reader (exceljs, which opens the archive with JSZip) sees the bytes, this module
 * checks that the entries the reader will open are exactly the entries checked here, then bounds them.
 *
 * A zip names its entries twice: a local header before each entry's data, and the central directory at
 * the end, counted by an end record. Readers disagree on which to trust. JSZip walks the central
 * directory for as long as it finds directory records (whatever count the end record states), takes
 * each entry's name from its local header, resolves `..` in names, and shifts every offset when bytes
 * come before the archive. A checker that trusts the end record's count, or the central names, checks
 * other entries than the ones read: a 1 MB file hiding a 1 GiB entry, or a sheet under another name.
 * So an archive is read only when every way of reading it agrees (docs/api.md, Bounds on what a file
 * may hold), else it is "not a valid xlsx file":
 * - the end record ends the file (its comment included) and is the last one in it; its count and size
 *   are those of the directory records actually there, which end where the end record starts;
 * - the local headers, walked from byte 0, follow one another with no gap, no overlap and no byte
 *   before the first or after the last: each is where its directory record says, with the same name
 *   (byte for byte), method and sizes (or a data descriptor, after the data, stating them);
 * - names are plain part names (no `..`, `.`, `\`, leading `/`, or a second name in an extra field),
 *   each once.
 * Then every entry is inflated once as a stream, counting bytes and keeping none, and stopped as soon as
 * it outgrows what it declared; the XML that streams past is counted (cells, shared strings) in every
 * part, whatever its name, and however its tags are written. A DTD, which OOXML forbids, is refused.
 *
 * Why a parser of our own: the zip readers installed (JSZip, unzipper, yauzl is not) each read one of
 * the two directories and expose no way to compare them, and a new dependency would be one more reader
 * whose view could differ from JSZip's. The format walked here is APPNOTE.TXT 6.3 (sections 4.3.7 to
 * 4.3.16), without zip64, encryption or multiple disks, which no spreadsheet of the size read needs.
 */

interface Part {
  name: string;
  nameBytes: Buffer;
  flags: number;
  method: number;
  crc: number;
  compressed: number;
  inflated: number;
  localHeader: number;
  /** Where the entry's compressed data starts, once its local header is read. */
  data: number;
}

const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const DATA_DESCRIPTOR = 0x08074b50;
const UNICODE_PATH = 0x7075;
const ENCRYPTED = 0x0001;
const HAS_DESCRIPTOR = 0x0008;
const MAX_PARTS = 10_000;
/** The end record's signature, 0x06054b50, as the bytes searched for. */
const END_SIGNATURE = Buffer.from([0x50, 0x4b, 0x05, 0x06]);

const bomb = (why: string) => new FileProblem(`not a usable Excel file: ${why} (an .xlsx may inflate to at most ${megabytes(XLSX_MAX_INFLATED_BYTES)})`);
const invalid = (why: string) => new FileProblem(`not a valid xlsx file: ${why}`);
const quoted = (name: string) => JSON.stringify(name.slice(0, 100));

export async function checkArchive(bytes: Buffer): Promise<void> {
  const parts = entries(bytes);
  let declared = 0;
  for (const part of parts) {
    declared += part.inflated;
    if (declared > XLSX_MAX_INFLATED_BYTES) throw bomb(`its parts declare more than ${megabytes(XLSX_MAX_INFLATED_BYTES)} when inflated`);
    if (part.inflated > XLSX_RATIO_FROM_BYTES && part.inflated > part.compressed * XLSX_MAX_RATIO) {
      throw bomb(`the part ${quoted(part.name)} inflates ${Math.round(part.inflated / Math.max(1, part.compressed))} times`);
    }
  }
  const counts = { cells: 0, strings: 0 };
  for (const part of parts) await checkInflated(bytes, part, counts);
}

/** The archive's entries, once the end record, the central directory and the local headers agree on them. */
function entries(bytes: Buffer): Part[] {
  const end = findEndOfDirectory(bytes);
  const disk = bytes.readUInt16LE(end + 4);
  const directoryDisk = bytes.readUInt16LE(end + 6);
  const countOnDisk = bytes.readUInt16LE(end + 8);
  const count = bytes.readUInt16LE(end + 10);
  const size = bytes.readUInt32LE(end + 12);
  const offset = bytes.readUInt32LE(end + 16);
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) throw bomb('it is a zip64 archive, which no spreadsheet of this size needs');
  if (disk !== 0 || directoryDisk !== 0 || countOnDisk !== count) throw invalid('it is one part of a split zip archive');
  if (offset + size !== end) throw invalid(`its zip directory does not end where its end record starts (${offset + size} ≠ ${end})`);
  const parts = centralDirectory(bytes, offset, end);
  if (parts.length !== count) throw invalid(`its zip directory holds ${parts.length} entries but its end record counts ${count}`);
  walkLocalHeaders(bytes, parts, offset);
  return parts;
}

/** The last end record of the file; it must end the file (with its comment), as every reader's search starts at the end. */
function findEndOfDirectory(bytes: Buffer): number {
  const end = bytes.lastIndexOf(END_SIGNATURE);
  if (end < 0) throw invalid('no zip directory (is the file complete?)');
  if (end + 22 > bytes.length) throw invalid('its zip end record is cut short');
  if (end + 22 + bytes.readUInt16LE(end + 20) !== bytes.length) throw invalid('bytes follow its zip end record');
  return end;
}

/** Every directory record from `offset` to `end`, as a reader that walks records until none follows sees them. */
function centralDirectory(bytes: Buffer, offset: number, end: number): Part[] {
  const parts: Part[] = [];
  const names = new Set<string>();
  let at = offset;
  while (at < end) {
    if (parts.length >= MAX_PARTS) throw bomb(`it has more than ${MAX_PARTS} parts`);
    if (at + 46 > end || bytes.readUInt32LE(at) !== DIRECTORY_ENTRY) throw invalid('its zip directory is damaged');
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const next = at + 46 + nameLength + extraLength + bytes.readUInt16LE(at + 32);
    if (next > end) throw invalid('its zip directory is damaged');
    const nameBytes = bytes.subarray(at + 46, at + 46 + nameLength);
    const part: Part = {
      name: nameBytes.toString('utf8'),
      nameBytes,
      flags: bytes.readUInt16LE(at + 8),
      method: bytes.readUInt16LE(at + 10),
      crc: bytes.readUInt32LE(at + 16),
      compressed: bytes.readUInt32LE(at + 20),
      inflated: bytes.readUInt32LE(at + 24),
      localHeader: bytes.readUInt32LE(at + 42),
      data: 0,
    };
    if (part.compressed === 0xffffffff || part.inflated === 0xffffffff || part.localHeader === 0xffffffff) {
      throw bomb('it is a zip64 archive, which no spreadsheet of this size needs');
    }
    if (bytes.readUInt16LE(at + 34) !== 0) throw invalid('it is one part of a split zip archive');
    if (part.flags & ENCRYPTED) throw invalid(`the part ${quoted(part.name)} is encrypted`);
    if (part.method !== 0 && part.method !== 8) throw invalid(`zip compression method ${part.method} is not one spreadsheets use`);
    checkName(part.name);
    if (secondName(bytes.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength), part.name)) {
      throw invalid(`the part ${quoted(part.name)} carries a second, different name`);
    }
    if (names.has(part.name)) throw invalid(`the part ${quoted(part.name)} is in it twice`);
    names.add(part.name);
    parts.push(part);
    at = next;
  }
  return parts;
}

/** A part name as spreadsheets write them: JSZip would resolve `a/../b` to `b`, exceljs drop a leading `/`. */
function checkName(name: string): void {
  const segments = name.split('/');
  if (name === '' || name.includes('\\') || name.includes('\0') || name.includes('\ufffd') || segments[0] === ''
    || segments.some((segment, i) => segment === '.' || segment === '..' || (segment === '' && i < segments.length - 1))) {
    throw invalid(`the part name ${quoted(name)} is not one a spreadsheet has`);
  }
}

/** Whether an extra field gives the entry another name (Info-ZIP Unicode Path, which JSZip prefers). */
function secondName(extra: Buffer, name: string): boolean {
  for (let at = 0; at + 4 <= extra.length;) {
    const id = extra.readUInt16LE(at);
    const length = extra.readUInt16LE(at + 2);
    if (id === UNICODE_PATH) return at + 4 + length > extra.length || extra.toString('utf8', at + 9, at + 4 + length) !== name;
    at += 4 + length;
  }
  return false;
}

/**
 * The local headers from byte 0 to the directory, one after another: each where its directory record
 * points, saying what the record says, its data (and data descriptor) ending where the next begins.
 */
function walkLocalHeaders(bytes: Buffer, parts: Part[], directoryStart: number): void {
  let at = 0;
  for (const part of [...parts].sort((a, b) => a.localHeader - b.localHeader)) {
    if (part.localHeader !== at) {
      throw invalid(at === 0 ? 'bytes come before its first zip entry' : `its zip entries do not follow one another (at byte ${at})`);
    }
    if (at + 30 > directoryStart || bytes.readUInt32LE(at) !== LOCAL_HEADER) throw invalid('a zip entry is damaged');
    const flags = bytes.readUInt16LE(at + 6);
    const nameLength = bytes.readUInt16LE(at + 26);
    const name = bytes.subarray(at + 30, at + 30 + nameLength);
    if (!name.equals(part.nameBytes)) {
      throw invalid(`the part ${quoted(part.name)} is named ${quoted(name.toString('utf8'))} where its data is`);
    }
    // The local header's own flag says whether a data descriptor follows (some writers set it there only).
    if ((flags & ENCRYPTED) !== 0 || bytes.readUInt16LE(at + 8) !== part.method) throw invalid(`the part ${quoted(part.name)} is described two ways`);
    const local = { crc: bytes.readUInt32LE(at + 14), compressed: bytes.readUInt32LE(at + 18), inflated: bytes.readUInt32LE(at + 22) };
    part.data = at + 30 + nameLength + bytes.readUInt16LE(at + 28);
    at = part.data + part.compressed;
    if (at > directoryStart) throw invalid(`the part ${quoted(part.name)} runs into the zip directory`);
    if (flags & HAS_DESCRIPTOR) {
      // Streaming writers (exceljs itself) state the sizes after the data; the header holds zeros.
      if (!matches(local, part) && !(local.crc === 0 && local.compressed === 0 && local.inflated === 0)) {
        throw invalid(`the part ${quoted(part.name)} is described two ways`);
      }
      at = afterDescriptor(bytes, at, part, directoryStart);
    } else if (!matches(local, part)) {
      throw invalid(`the part ${quoted(part.name)} is described two ways`);
    }
  }
  if (at !== directoryStart) throw invalid(parts.length === 0 ? 'it holds no zip entry' : `${directoryStart - at} bytes lie between its last zip entry and its directory`);
}

const matches = (a: { crc: number; compressed: number; inflated: number }, b: Part): boolean =>
  a.crc === b.crc && a.compressed === b.compressed && a.inflated === b.inflated;

/** Past a data descriptor (its signature optional, as APPNOTE 4.3.9.3 allows) that repeats the directory's values. */
function afterDescriptor(bytes: Buffer, at: number, part: Part, limit: number): number {
  const start = at + 16 <= limit && bytes.readUInt32LE(at) === DATA_DESCRIPTOR ? at + 4 : at;
  if (start + 12 > limit) throw invalid(`the part ${quoted(part.name)} is cut short`);
  const stated = { crc: bytes.readUInt32LE(start), compressed: bytes.readUInt32LE(start + 4), inflated: bytes.readUInt32LE(start + 8) };
  if (!matches(stated, part)) throw invalid(`the part ${quoted(part.name)} is described two ways`);
  return start + 12;
}

/**
 * What an Excel reader would make objects of, counted in the inflated XML as it streams past: cells
 * (`<c` and a space, tab, line break, `/` or `>`) and shared strings (`<si` likewise), in every part
 * whatever its name (exceljs finds sheets by a pattern anywhere in the name), bounded before the workbook
 * is loaded (docs/api.md, Bounds on what a file may hold). A `<!DOCTYPE` is refused: OOXML parts have none,
 * and a DTD is where entity expansion and external entities live.
 */
interface Counts { cells: number; strings: number }
const COUNTED: { tag: Buffer; key: keyof Counts; most: number; what: string }[] = [
  { tag: Buffer.from('<c'), key: 'cells', most: XLSX_MAX_CELLS, what: 'cells' },
  { tag: Buffer.from('<si'), key: 'strings', most: XLSX_MAX_SHARED_STRINGS, what: 'shared strings' },
];
const DOCTYPE = Buffer.from('<!DOCTYPE');
/** The longest tag looked for, which a chunk's end may cut. */
const LONGEST = DOCTYPE.length;

/** After a tag's name: whitespace as XML has it, the end of an empty element, or the end of the tag. */
const ENDS_NAME = new Set([0x20, 0x09, 0x0a, 0x0d, 0x2f, 0x3e]);

/** Counts one part's tags chunk by chunk; a tag split between two chunks is counted once. */
function tagCounter(): (chunk: Buffer) => { cells: number; strings: number; doctype: boolean } {
  let tail = Buffer.alloc(0);
  return (chunk) => {
    const text = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
    // Bytes that could start a tag whose end is not yet here are kept for the next chunk, and not looked at now.
    const upTo = Math.max(0, text.length - LONGEST);
    const found = { cells: 0, strings: 0, doctype: false };
    for (const counted of COUNTED) {
      for (let at = text.indexOf(counted.tag); at >= 0 && at < upTo; at = text.indexOf(counted.tag, at + 1)) {
        if (ENDS_NAME.has(text[at + counted.tag.length]!)) found[counted.key]++;
      }
    }
    const doctype = text.indexOf(DOCTYPE);
    found.doctype = doctype >= 0 && doctype < upTo;
    tail = Buffer.from(text.subarray(upTo));
    return found;
  };
}

/** The last bytes of a part, which its counter kept back: at its end no tag is cut any more. */
const ENDING = Buffer.alloc(LONGEST, 0x20);

/** Inflates one part as a stream, off the event loop, holding no output; refuses it once it outgrows its declared size. */
async function checkInflated(bytes: Buffer, part: Part, counts: Counts): Promise<void> {
  const data = bytes.subarray(part.data, part.data + part.compressed);
  const count = tagCounter();
  const tally = (chunk: Buffer): FileProblem | undefined => {
    const found = count(chunk);
    if (found.doctype) return invalid(`the part ${quoted(part.name)} declares a DTD`);
    for (const counted of COUNTED) {
      counts[counted.key] += found[counted.key];
      if (counts[counted.key] > counted.most) {
        return new FileProblem(`the workbook holds more than ${counted.most.toLocaleString('en-US')} ${counted.what}, more than one import may read; split it into several files`);
      }
    }
    return undefined;
  };
  if (part.method === 0) {
    if (data.length !== part.inflated) throw invalid('a stored zip entry has the wrong size');
    const problem = tally(data) ?? tally(ENDING);
    if (problem) throw problem;
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const inflate = createInflateRaw();
    let seen = 0;
    let failed = false;
    const fail = (problem: FileProblem) => {
      failed = true;
      inflate.destroy();
      reject(problem);
    };
    inflate.on('data', (chunk: Buffer) => {
      if (failed) return;
      seen += chunk.length;
      const problem = seen > part.inflated
        ? bomb(`the part ${quoted(part.name)} inflates to more than the ${part.inflated} bytes it declares`)
        : tally(chunk);
      if (problem) fail(problem);
    });
    inflate.on('error', () => fail(invalid('a zip entry does not inflate')));
    inflate.on('end', () => {
      if (failed) return;
      const problem = seen === part.inflated ? tally(ENDING) : invalid('a zip entry is shorter than it declares');
      if (problem) reject(problem);
      else resolve();
    });
    inflate.end(data);
  });
}
