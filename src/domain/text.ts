/**
 * Control characters: C0 (U+0000–U+001F), DEL, C1 (U+0080–U+009F) and the Unicode line and paragraph
 * separators. In a name they can forge lines or terminal escapes wherever the text is printed. With
 * them, Unicode format characters (category Cf): invisible (U+200B zero width space, U+FEFF) or
 * reordering what follows (U+202E right-to-left override), so a name can look like another one. The
 * zero-width joiners (U+200C, U+200D) are Cf too and refused with them: names the operator types
 * are Latin-script in practice, and a look-alike is worse than a joiner spelled without.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/u;
// eslint-disable-next-line no-control-regex -- as above
const CONTROL_ALL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/gu;

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export const hasControlCharacters = (text: string): boolean => CONTROL.test(text);

/** `text` on one printable line: each control or format character written as an escape (`\n`, `\u001b`, `\u202e`). */
export const escapeControlCharacters = (text: string): string =>
  text.replace(CONTROL_ALL, (c) => SHORT[c] ?? escape(c.codePointAt(0)!));

const escape = (code: number): string => (code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`);

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * An email address a console user is known by (the CLI's `user invite` and the console's People
 * page): one `@`, a dot in the domain, at most 254 characters, and nothing invisible or controlling,
 * which `\s` alone lets through (U+202E, U+200B, an escape) — the address is shown in user lists.
 */
export const isEmailAddress = (text: string): boolean => text.length <= 254 && EMAIL.test(text) && !hasControlCharacters(text);

/** The most characters of a cell a message quotes (docs/api.md, Feeds: a run's problems). */
export const QUOTED_CELL_MAX = 100;

/** `text` as a message quotes it: at most QUOTED_CELL_MAX characters (never half a character), then "…". */
export function cellExcerpt(text: string): string {
  if (text.length <= QUOTED_CELL_MAX) return text;
  const cut = /[\ud800-\udbff]/.test(text[QUOTED_CELL_MAX - 1]!) ? QUOTED_CELL_MAX - 1 : QUOTED_CELL_MAX;
  return `${text.slice(0, cut)}…`;
}
