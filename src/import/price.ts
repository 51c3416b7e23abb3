import { cellExcerpt } from '../domain/text.js';

/**
 * Prices are whole numbers (docs/api.md, Requests and validation). A spreadsheet often writes them for people: `12.500,00 €`,
 * `$12,500`, `CHF 12'500.-`. Whether `12,500` is twelve thousand five hundred or twelve and a half
 * depends on who wrote it, so such a cell is never read as a number: it is refused with the plain form
 * that would be accepted (docs/push.md, Prices written for people), which the person checks and writes.
 */

/** Currency signs and codes, spaces of every width, apostrophes (Swiss grouping), a trailing `.-`. */
const DECORATION = /\p{Sc}|\b[A-Za-z]{3}\b|[\s\u00a0\u202f'’]|\.-$|,-$/gu;

/** Why `cell` is not a plain whole number and the form that would be, or undefined when it does not look like a price. */
export function priceProblem(cell: string, column: string): string | undefined {
  const text = cell.trim();
  const bare = text.replace(DECORATION, '');
  if (!/^-?\d[\d.,]*$/.test(bare) || !/\d/.test(bare)) return undefined;
  const hasSign = /\p{Sc}|\b[A-Za-z]{3}\b/u.test(text);
  const reading = readAmount(bare);
  // A plain decimal (`12.5`) is no written-for-people form: the API's own rule (an integer) answers it.
  if (!hasSign && reading && !reading.grouped) return undefined;
  const where = `"${cellExcerpt(text)}" in column ${JSON.stringify(cellExcerpt(column))}`;
  const how = [hasSign ? 'a currency sign' : '', reading?.grouped ? 'thousands separators' : '', reading?.decimals ? 'decimals' : '']
    .filter(Boolean);
  const written = how.length > 0 ? `is written with ${how.slice(0, -1).join(', ')}${how.length > 1 ? ' and ' : ''}${how.at(-1)!}` : 'is not a plain whole number';
  if (!reading) return `${where} ${written}; write the price as a plain whole number (digits only, e.g. 12500)`;
  const after = hasSign ? ' and the currency in the currency column' : '';
  if (reading.decimals && !/^0+$/.test(reading.decimals)) {
    return `${where} ${written}; prices are whole numbers, never rounded here: write whole units as digits only (such as ${reading.whole})${after}`;
  }
  return `${where} ${written}; such forms are never guessed: write ${reading.whole}${after}`;
}

/**
 * The reading of `12.500,00`, `12,500`, `1.234.567`, `12500.5`: the last separator followed by one or two
 * digits marks decimals, groups of three digits mark thousands. Anything else has no reading.
 */
function readAmount(bare: string): { whole: string; grouped: boolean; decimals: string } | undefined {
  const sign = bare.startsWith('-') ? '-' : '';
  const digits = bare.slice(sign.length);
  const decimal = /^(.*?)([.,])(\d{1,2})$/.exec(digits);
  const [integer, separator, decimals] = decimal ? [decimal[1]!, decimal[2]!, decimal[3]!] : [digits, '', ''];
  const groups = integer.split(/[.,]/);
  const groupSeparators = new Set(integer.match(/[.,]/g) ?? []);
  if (groupSeparators.size > 1 || (separator && groupSeparators.has(separator))) return undefined;
  if (groups.length > 1 && !(/^\d{1,3}$/.test(groups[0]!) && groups.slice(1).every((g) => /^\d{3}$/.test(g)))) return undefined;
  if (groups.some((g) => g === '')) return undefined;
  return { whole: sign + String(Number(groups.join(''))), grouped: groups.length > 1, decimals };
}
