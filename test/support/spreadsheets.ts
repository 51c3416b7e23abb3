import { constants, crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import ExcelJS from 'exceljs';

/** Test files of the kinds galleries upload: Excel workbooks written by exceljs, and zip archives built byte by byte. */

/** An .xlsx workbook of one or more sheets; cells keep their JavaScript types (numbers, Dates, strings). */
export async function workbook(sheets: Record<string, unknown[][]>, formats: Record<number, string> = {}): Promise<Buffer> {
  const book = new ExcelJS.Workbook();
  for (const [name, rows] of Object.entries(sheets)) {
    const sheet = book.addWorksheet(name);
    for (const row of rows) sheet.addRow(row);
    for (const [column, format] of Object.entries(formats)) sheet.getColumn(Number(column)).numFmt = format;
  }
  return Buffer.from(await book.xlsx.writeBuffer());
}

interface Entry {
  name: string;
  data: Buffer;
  inflated?: number;
  declared?: number;
  /** The name its local header gives, where it differs from the directory's (a hostile zip). */
  localName?: string;
  /** Data deflated beforehand (a bomb too big to hold inflated), with its inflated size and CRC-32. */
  deflated?: { bytes: Buffer; inflated: number; crc: number };
}

/**
 * A zip archive of deflated entries. `declared` overrides the inflated size the directory states: a
 * bomb may lie about it. Hostile shapes: `count` is the entry count the end record states, `before`
 * bytes put ahead of the first entry (as a self-extracting archive has, the directory's offsets
 * counting them).
 */
export function zip(entries: Entry[], { count, before = Buffer.alloc(0) }: { count?: number; before?: Buffer } = {}): Buffer {
  const locals: Buffer[] = [before];
  const central: Buffer[] = [];
  let offset = before.length;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const localName = Buffer.from(entry.localName ?? entry.name);
    const compressed = entry.deflated?.bytes ?? deflateRawSync(entry.data);
    const size = entry.declared ?? entry.deflated?.inflated ?? entry.data.length;
    const crc = entry.deflated?.crc ?? crc32(entry.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14); local.writeUInt32LE(compressed.length, 18); local.writeUInt32LE(size, 22); local.writeUInt16LE(localName.length, 26);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0); header.writeUInt16LE(20, 4); header.writeUInt16LE(20, 6); header.writeUInt16LE(8, 10);
    header.writeUInt32LE(crc, 16); header.writeUInt32LE(compressed.length, 20); header.writeUInt32LE(size, 24); header.writeUInt16LE(name.length, 28);
    header.writeUInt32LE(offset, 42);
    locals.push(local, localName, compressed);
    central.push(header, name);
    offset += local.length + localName.length + compressed.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(count ?? entries.length, 8); end.writeUInt16LE(count ?? entries.length, 10);
  end.writeUInt32LE(directory.length, 12); end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The entries of a well-formed zip (one exceljs wrote), inflated, to be zipped again in another shape. */
export function unzip(bytes: Buffer): { name: string; data: Buffer }[] {
  const end = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const found: { name: string; data: Buffer }[] = [];
  let at = bytes.readUInt32LE(end + 16);
  for (let i = 0; i < bytes.readUInt16LE(end + 10); i++) {
    const nameLength = bytes.readUInt16LE(at + 28);
    const compressed = bytes.readUInt32LE(at + 20);
    const local = bytes.readUInt32LE(at + 42);
    const data = bytes.subarray(local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28)).subarray(0, compressed);
    found.push({ name: bytes.toString('utf8', at + 46, at + 46 + nameLength), data: bytes.readUInt16LE(at + 10) === 8 ? inflateRawSync(data) : Buffer.from(data) });
    at += 46 + nameLength + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
  }
  return found;
}

/**
 * `inflated` bytes of zeros, deflated without ever holding them: one megabyte deflated with a full flush
 * (which forgets what came before) is the same bytes every time, so the stream is that block repeated,
 * then an empty final block. 1 GiB is about 1 MB.
 */
export function deflatedZeros(inflated: number): { bytes: Buffer; inflated: number; crc: number } {
  const block = 1024 * 1024;
  const zeros = Buffer.alloc(block);
  const flushed = deflateRawSync(zeros, { finishFlush: constants.Z_FULL_FLUSH });
  const blocks = Math.ceil(inflated / block);
  let crc = 0;
  for (let i = 0; i < blocks; i++) crc = crc32(zeros, crc);
  return { bytes: Buffer.concat([...Array.from({ length: blocks }, () => flushed), Buffer.from([0x03, 0x00])]), inflated: blocks * block, crc };
}

/**
 * The hostile workbooks of docs/security-testing.md, each a readable workbook of `rows` (title, external_id)
 * in another shape: `understated`, its end record counting one entry fewer than it holds, the hidden one
 * 1 GiB of zeros (about 1 MB deflated); `renamed`, its sheet's local header naming it as the directory does
 * not (the directory says a picture); `prefixed`, bytes before its first entry; `whitespace`, a sheet of
 * `cells` cells whose tags are written `<c\tr=`, `<c\nr=`, `<c\r\nr=`.
 */
export async function hostileXlsx(shape: 'understated' | 'renamed' | 'prefixed' | 'whitespace', rows: unknown[][], cells = 1_000_001): Promise<Buffer> {
  const parts = unzip(await workbook({ Sheet1: rows }));
  switch (shape) {
    case 'understated':
      return zip([...parts, { name: 'xl/media/image1.png', data: Buffer.alloc(0), deflated: zerosOfAGibibyte() }], { count: parts.length });
    case 'renamed':
      return zip(parts.map((part) => (part.name === 'xl/worksheets/sheet1.xml' ? { ...part, name: 'xl/media/image9.png', localName: part.name } : part)));
    case 'prefixed':
      return zip(parts, { before: Buffer.from('#!/bin/sh\nexit 0\n') });
    case 'whitespace': {
      const spaces = ['\t', '\n', '\r\n'];
      const sheet: string[] = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'];
      const columns = 20;
      for (let row = 1; (row - 1) * columns < cells; row++) {
        sheet.push(`<row r="${row}">`);
        for (let column = 0; column < columns && (row - 1) * columns + column < cells; column++) {
          sheet.push(`<c${spaces[(row + column) % 3]}r="${String.fromCharCode(65 + column)}${row}"><v>${(row * 7919 + column) % 1_000_003}</v></c>`);
        }
        sheet.push('</row>');
      }
      sheet.push('</sheetData></worksheet>');
      return zip(parts.map((part) => (part.name === 'xl/worksheets/sheet1.xml' ? { ...part, data: Buffer.from(sheet.join('')) } : part)));
    }
  }
}

let gibibyte: ReturnType<typeof deflatedZeros> | undefined;
const zerosOfAGibibyte = () => (gibibyte ??= deflatedZeros(1024 * 1024 * 1024));

/** An .xlsx-shaped zip whose sheet inflates to `bytes` of spaces, declaring that size or `declared`. */
export function zipBomb(bytes: number, declared?: number): Buffer {
  const sheet = Buffer.alloc(bytes, 0x20);
  return zip([
    { name: '[Content_Types].xml', data: Buffer.from('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>') },
    { name: 'xl/worksheets/sheet1.xml', data: sheet, ...(declared !== undefined ? { declared } : {}) },
  ]);
}
