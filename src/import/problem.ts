/**
 * Advice on a problem, for each caller to word its own way (docs/architecture.md, The import planner):
 * `push` names a flag, the console a control on its page, a feed run its settings or nothing.
 */
export type Hint =
  /**
   * A column should fill a field: `title` when the message lists the columns left out (one of them
   * is the title), null when the message lists unknown columns (map each to its field).
   */
  | { kind: 'map-column'; field: 'title' | null }
  /** Several records match the row by artist, title and year: an external_id tells them apart. */
  | { kind: 'external-id' }
  /** A price that names no currency, in a gallery with no default currency. */
  | { kind: 'currency' };

/**
 * One thing wrong with a row, as the planner finds it (src/import/planner.ts): where it stands, what is
 * wrong, and the advice apart. A caller shows `message` as it is and words `hint` itself; nobody parses
 * a message for its line, column or advice.
 */
export interface Problem {
  /** The row's line (CSV), row (Excel) or item (JSON) number. */
  line: number;
  /** The file's column the problem is in, when one is (the field's name when no column fills it). */
  column: string | null;
  /** `field: reason`, or the reason alone when no one field is at fault. */
  message: string;
  hint: Hint | null;
}

/** A problem with a file as a whole: nothing of it is sent or written. Its message holds no advice: `hint` does. */
export class FileProblem extends Error {
  readonly hint: Hint | null;

  constructor(message: string, options: { cause?: unknown; hint?: Hint } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.hint = options.hint ?? null;
  }
}

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
