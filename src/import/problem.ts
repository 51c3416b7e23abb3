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
