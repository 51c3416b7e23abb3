/**
 * Control characters: C0 (U+0000–U+001F), DEL, C1 (U+0080–U+009F) and the Unicode line and paragraph
 * separators. In a name they can forge lines or terminal escapes wherever the text is printed.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// eslint-disable-next-line no-control-regex -- as above
const CONTROL_ALL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export const hasControlCharacters = (text: string): boolean => CONTROL.test(text);

/** `text` on one printable line: each control character written as an escape (`\n`, `\u001b`). */
export const escapeControlCharacters = (text: string): string =>
  text.replace(CONTROL_ALL, (c) => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
