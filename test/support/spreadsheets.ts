import { crc32, deflateRawSync } from 'node:zlib';
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

interface Entry { name: string; data: Buffer; inflated?: number; declared?: number }

/**
 * A zip archive of deflated entries. `declared` overrides the inflated size the directory states: a
 * bomb may lie about it.
 */
export function zip(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const compressed = deflateRawSync(entry.data);
    const size = entry.declared ?? entry.data.length;
    const crc = crc32(entry.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14); local.writeUInt32LE(compressed.length, 18); local.writeUInt32LE(size, 22); local.writeUInt16LE(name.length, 26);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0); header.writeUInt16LE(20, 4); header.writeUInt16LE(20, 6); header.writeUInt16LE(8, 10);
    header.writeUInt32LE(crc, 16); header.writeUInt32LE(compressed.length, 20); header.writeUInt32LE(size, 24); header.writeUInt16LE(name.length, 28);
    header.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    central.push(header, name);
    offset += local.length + name.length + compressed.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(entries.length, 8); end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12); end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** An .xlsx-shaped zip whose sheet inflates to `bytes` of spaces, declaring that size or `declared`. */
export function zipBomb(bytes: number, declared?: number): Buffer {
  const sheet = Buffer.alloc(bytes, 0x20);
  return zip([
    { name: '[Content_Types].xml', data: Buffer.from('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>') },
    { name: 'xl/worksheets/sheet1.xml', data: sheet, ...(declared !== undefined ? { declared } : {}) },
  ]);
}
