/** A problem with a file as a whole: nothing of it is sent or written. */
export class FileProblem extends Error {}

/**
 * A file that is not valid UTF-8: `push` refuses it (pass --encoding latin1), the console offers the
 * encoding choice instead.
 */
export class NotUtf8 extends FileProblem {
  constructor(readonly line: number, readonly byte: number) {
    super(`line ${line} is not valid UTF-8 (byte 0x${byte.toString(16).toUpperCase().padStart(2, '0')}); `
      + 'if the file was saved as Latin-1 or Windows-1252 (older spreadsheet exports), pass --encoding latin1');
  }
}

/**
 * A workbook of several sheets read with no sheet named, by a caller that asked to choose (the console
 * offers the sheets; `push` reads the first or its --sheet).
 */
export class SheetToChoose extends FileProblem {
  constructor(readonly sheets: string[]) {
    super(`the workbook has ${sheets.length} sheets: name the one to read`);
  }
}
