import { isUtf8 } from 'node:buffer';
import { setImmediate } from 'node:timers/promises';
import { NotUtf8 } from './problem.js';

/**
 * A file's bytes as text (docs/push.md, What it checks before sending anything): UTF-8 unless the person says otherwise, and invalid UTF-8
 * refused with its line — decoding it leniently is how "K�the Kollwitz" became an artist.
 */

/** The encodings `push --encoding` and the console accept; `latin1` is read as Windows-1252, what spreadsheets export. */
export const ENCODINGS = ['utf8', 'latin1'] as const;
export type Encoding = (typeof ENCODINGS)[number];

/** What an encoding may be called, spelled as people spell them. */
const ENCODING_NAMES: Record<string, Encoding | undefined> = {
  utf8: 'utf8', latin1: 'latin1', iso88591: 'latin1', windows1252: 'latin1', cp1252: 'latin1',
};

export const encodingNamed = (name: string): Encoding | undefined => ENCODING_NAMES[name.toLowerCase().replace(/[-_ ]/g, '')];

export async function decodeFile(bytes: Uint8Array, encoding: Encoding): Promise<string[]> {
  if (encoding === 'utf8' && !isUtf8(bytes)) {
    const offset = firstInvalidUtf8(bytes);
    throw new NotUtf8(countNewlines(bytes, offset) + 1, bytes[offset]!);
  }
  // A megabyte per turn of the event loop, and the parts never joined: a 19 MB file decoded in one call
  // held the loop 24-53 ms on a loaded machine, and joining the parts 25 ms more. TextDecoder drops a
  // leading byte-order mark.
  const decoder = new TextDecoder(encoding === 'latin1' ? 'windows-1252' : 'utf-8');
  const parts: string[] = [];
  for (let at = 0; at < bytes.length; at += DECODE_SLICE) {
    parts.push(decoder.decode(bytes.subarray(at, at + DECODE_SLICE), { stream: true }));
    if (at + DECODE_SLICE < bytes.length) await setImmediate();
  }
  parts.push(decoder.decode());
  return parts;
}

const DECODE_SLICE = 1024 * 1024;

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

/** The header row is looked for in this many characters: a longer one is no header. */
const HEADER_SCAN_CHARS = 64 * 1024;

/**
 * The delimiter of a CSV: whichever of `,` `;` and tab occurs most often in the header row outside
 * quotes (header cells are field names, so they rarely hold another delimiter). Comma on a tie.
 */
export function detectDelimiter(text: string): string {
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const ch of text.slice(0, HEADER_SCAN_CHARS)) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best: string = ',';
  for (const d of DELIMITERS) if (counts.get(d)! > counts.get(best)!) best = d;
  return best;
}
