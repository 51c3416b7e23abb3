import { FileProblem, NotUtf8, SheetToChoose } from '../import/problem.js';
import { readTable } from '../import/table.js';
import type { HeldImport, HeldImports } from './held-imports.js';

/**
 * Reads the held bytes as a table with the chosen encoding and sheet; a file-wide problem as a sentence, or
 * nothing. The bytes stay held while a choice is open: the encoding (`notUtf8`) or the sheet (`sheets`). A
 * problem with no choice left lets the upload go: its page answers 404 ("upload the file again") instead of
 * a page with nothing to show. While it reads, `upload.reading` is the read, which a request for the same
 * upload waits for (pages/import.ts), so no page sees a file half read.
 *
 * Reads are bounded in this process (docs/console.md, Import): at most MAX_READS at once (another waits its
 * turn briefly), and the held tables within HELD_BUDGET_BYTES. Past either the upload is let go and the
 * answer is busy: the page answers 503 or 429 with Retry-After.
 */
export function readUpload(held: HeldImports, upload: HeldImport, options: { offerEncoding: boolean }): Promise<Refusal | undefined> {
  const reading: Promise<Refusal | undefined> = read(held, upload, options).finally(() => {
    if (upload.reading === reading) delete upload.reading;
  });
  upload.reading = reading;
  return reading;
}

/** Why a file was not read: a sentence for the page, and whether the server was busy (try again later) rather than the file at fault. */
export interface Refusal {
  problem: string;
  busy?: true;
}

export const READ_BUSY_RETRY_S = 30;
const BUSY: Refusal = { problem: `The server is reading other large files right now. Try again in ${READ_BUSY_RETRY_S} seconds.`, busy: true };

async function read(held: HeldImports, upload: HeldImport, options: { offerEncoding: boolean }): Promise<Refusal | undefined> {
  const endTurn = await held.readTurn(upload.entityId);
  if (!endTurn) {
    held.release(upload);
    return BUSY;
  }
  try {
    const problem = await readWithin(held, upload, options);
    if (problem !== undefined) return { problem };
  } finally {
    endTurn();
  }
  return upload.table && !held.admit(upload) ? BUSY : undefined;
}

async function readWithin(held: HeldImports, upload: HeldImport, { offerEncoding }: { offerEncoding: boolean }): Promise<string | undefined> {
  try {
    // A feed names its sheet when connected, or reads the first (pages/feeds.ts); an upload of a workbook of
    // several sheets asks which one (pages/import.ts).
    const sheet = upload.feed ? upload.feed.sheet ?? undefined : upload.sheet;
    upload.table = await readTable(upload.bytes!, { name: upload.name, encoding: upload.encoding, sheet, chooseSheet: !upload.feed });
    upload.map = new Map();
    // The table is what the next steps read: the file's bytes are let go, and a sheet choice is closed.
    upload.bytes = null;
    delete upload.sheets;
    return undefined;
  } catch (error) {
    if (error instanceof SheetToChoose) {
      upload.sheets = error.sheets;
      return undefined;
    }
    if (error instanceof NotUtf8 && offerEncoding) {
      upload.notUtf8 = { line: error.line, byte: error.byte };
      return undefined;
    }
    if (!(error instanceof FileProblem)) throw error;
    // A workbook whose chosen sheet cannot be read stays held for another sheet (pages/import.ts).
    if (!upload.sheets) held.release(upload);
    const text = error instanceof NotUtf8
      ? `Line ${error.line} is not valid UTF-8 (byte 0x${error.byte.toString(16).toUpperCase()}). If the file was saved by an older spreadsheet program, upload it again and choose Windows-1252 / Latin-1.`
      : `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`;
    return text.replace(/\.\.$/, '.');
  }
}
