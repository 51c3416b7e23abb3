import { isUtf8 } from 'node:buffer';

/**
 * A push file's bytes as text (decisions §9): UTF-8 unless the operator says otherwise, and invalid
 * UTF-8 refused with its line — decoding it leniently is how "K�the Kollwitz" became an artist.
 */

/** The encodings `push --encoding` accepts; `latin1` is read as Windows-1252, what spreadsheets export. */
export const ENCODINGS = ['utf8', 'latin1'] as const;
export type Encoding = (typeof ENCODINGS)[number];

/** A problem with the file as a whole: nothing is sent. */
export class FileProblem extends Error {}

export function decodeFile(bytes: Uint8Array, encoding: Encoding): string {
  if (encoding === 'latin1') return new TextDecoder('windows-1252').decode(bytes);
  if (!isUtf8(bytes)) {
    const offset = firstInvalidUtf8(bytes);
    const line = countNewlines(bytes, offset) + 1;
    throw new FileProblem(`line ${line} is not valid UTF-8 (byte 0x${bytes[offset]!.toString(16).toUpperCase().padStart(2, '0')}); `
      + 'if the file was saved as Latin-1 or Windows-1252 (older spreadsheet exports), pass --encoding latin1');
  }
  // TextDecoder drops a leading byte-order mark.
  return new TextDecoder('utf-8').decode(bytes);
}

/** The offset of the first byte that does not belong to a well-formed UTF-8 sequence (RFC 3629). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    const [length, min, max] = lead < 0x80 ? [1, 0, 0]
      : lead >= 0xc2 && lead <= 0xdf ? [2, 0x80, 0xbf]
        : lead === 0xe0 ? [3, 0xa0, 0xbf]
          : lead === 0xed ? [3, 0x80, 0x9f] // no UTF-16 surrogates
            : lead >= 0xe1 && lead <= 0xef ? [3, 0x80, 0xbf]
              : lead === 0xf0 ? [4, 0x90, 0xbf]
                : lead >= 0xf1 && lead <= 0xf3 ? [4, 0x80, 0xbf]
                  : lead === 0xf4 ? [4, 0x80, 0x8f]
                    : [0, 0, 0];
    if (length === 0) return i;
    for (let k = 1; k < length; k++) {
      const byte = bytes[i + k];
      const [low, high] = k === 1 ? [min, max] : [0x80, 0xbf];
      if (byte === undefined || byte < low || byte > high) return i;
    }
    i += length;
  }
  return bytes.length;
}

function countNewlines(bytes: Uint8Array, end: number): number {
  let count = 0;
  for (let i = 0; i < end; i++) if (bytes[i] === 0x0a) count++;
  return count;
}

const DELIMITERS = [',', ';', '\t'] as const;

/**
 * The delimiter of a CSV: whichever of `,` `;` and tab occurs most often in the header row outside
 * quotes (header cells are field names, so they rarely hold another delimiter). Comma on a tie.
 */
export function detectDelimiter(text: string): string {
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best: string = ',';
  for (const d of DELIMITERS) if (counts.get(d)! > counts.get(best)!) best = d;
  return best;
}
