import type ExcelJS from 'exceljs';
import { FileProblem, SheetToChoose } from './problem.js';
import { MAX_COLUMNS } from './limits.js';
import { checkCells, checkColumns, tooManyColumns, type Table } from './table-shape.js';
import { PackedCells } from './packed-rows.js';
import { checkArchive } from './zip.js';

/**
 * Excel .xlsx files (docs/push.md, Reading the file), read with exceljs: the maintained, MIT-licensed
 * reader on npm (SheetJS's `xlsx` package there is frozen at 0.18.5 with known advisories). The first
 * sheet, or the one named; for a caller that asks to choose, a workbook of several sheets is a
 * SheetToChoose naming them. Cells that Excel typed are turned into the text a CSV export would hold,
 * so that one set of conversions serves both: numbers as digits, dates of date cells as YYYY-MM-DD,
 * formulas as their result, rich text and links as their text.
 */

export async function xlsxTable(bytes: Buffer, sheetName: string | undefined, chooseSheet = false): Promise<Table> {
  await checkArchive(bytes);
  // Loaded on first use: every CLI command would otherwise pay for loading it (about 0.2 s).
  const { default: excel } = await import('exceljs');
  const workbook = new excel.Workbook();
  try {
    // exceljs's declared Buffer type predates Node's generic one.
    await workbook.xlsx.load(bytes as unknown as ExcelJS.Buffer);
  } catch (error) {
    throw new FileProblem(`not a readable Excel file: ${(error as Error).message}`, { cause: error });
  }
  const sheets = workbook.worksheets;
  if (sheetName === undefined && chooseSheet && sheets.length > 1) throw new SheetToChoose(sheets.map((s) => s.name));
  const sheet = sheetName === undefined
    ? sheets[0]
    : sheets.find((s) => s.name === sheetName) ?? sheets.find((s) => s.name.toLowerCase() === sheetName.trim().toLowerCase());
  if (!sheet) {
    throw new FileProblem(sheetName === undefined ? 'the workbook has no sheet'
      : `the workbook has no sheet named ${JSON.stringify(sheetName)}; its sheets are ${sheets.map((s) => JSON.stringify(s.name)).join(', ')}`);
  }
  const where = sheets.length > 1 ? ` of sheet ${JSON.stringify(sheet.name)}` : '';
  let columns: string[] | undefined;
  const rows = new PackedCells((n) => `row ${n}${where}`);
  let problem: FileProblem | undefined;
  sheet.eachRow({ includeEmpty: false }, (row, number) => {
    if (problem) return;
    // A row's cells as they are, not row.values: that is an array as long as the row's last column (16,384
    // for a cell at XFD) with holes where no cell is, for every row.
    const cells: string[] = [];
    let extra = -1;
    row.eachCell({ includeEmpty: false }, (cell, column) => {
      const text = cellText(cell.value);
      if (columns && column > columns.length) {
        if (extra < 0 && text.trim() !== '') extra = column - 1;
        return;
      }
      // A header is at most MAX_COLUMNS wide: past that its width is all that is needed to refuse it.
      if (!columns && column > MAX_COLUMNS + 1) {
        if (text.trim() !== '') extra = column - 1;
        return;
      }
      cells[column - 1] = text;
    });
    const filled = Array.from(cells, (cell) => cell ?? '');
    if (extra < 0 && filled.every((cell) => cell.trim() === '')) return;
    if (!columns) {
      while (filled.length > 0 && filled.at(-1)!.trim() === '') filled.pop();
      try {
        if (extra >= 0) throw tooManyColumns('the header has', 'columns');
        checkColumns(filled);
      } catch (error) {
        problem = error as FileProblem;
        return;
      }
      columns = filled;
      return;
    }
    if (extra >= 0) {
      problem = new FileProblem(`row ${number}${where} has a value in column ${columnLetter(extra)}, which has no header`);
      return;
    }
    try {
      checkCells(rows.length + 1, columns.length, 'rows');
    } catch (error) {
      problem = error as FileProblem;
      return;
    }
    rows.push(number, columns.map((_, i) => filled[i] ?? ''));
  });
  if (problem) throw problem;
  if (!columns) throw new FileProblem(`the sheet ${JSON.stringify(sheet.name)} is empty`);
  if (rows.length === 0) throw new FileProblem(`the sheet ${JSON.stringify(sheet.name)} has a header row but no data rows`);
  return { format: 'xlsx', columns, rows };
}

/** A cell as the text a CSV export of it would hold. */
export function cellText(value: ExcelJS.CellValue): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  if (typeof value === 'number') return Number.isInteger(value) ? value.toFixed(0) : String(value);
  if (typeof value !== 'object') return String(value);
  if ('richText' in value) return value.richText.map((part) => part.text).join('');
  if ('hyperlink' in value) return typeof value.text === 'string' ? value.text : cellText(value.text);
  if ('formula' in value || 'sharedFormula' in value) return cellText(value.result);
  if ('error' in value) return value.error;
  return '';
}

/** Column 0 → A, 26 → AA, as the spreadsheet shows it. */
function columnLetter(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}
