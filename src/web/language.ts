/**
 * The language of a gallery's own text, guessed cheaply (we hold no language field): by writing system
 * for scripts that name one language well enough, else by counting common function words of a few
 * European languages in the first 600 characters. Undecided → undefined, and the text inherits the
 * page's `en` (the interface's own words are English). WCAG 3.1.2 "language of parts".
 */
const SCRIPTS: Array<[RegExp, string]> = [
  [/[\u3040-\u30ff]/u, 'ja'],
  [/[\uac00-\ud7af]/u, 'ko'],
  [/\p{Script=Han}/u, 'zh'],
  [/\p{Script=Greek}/u, 'el'],
  [/\p{Script=Arabic}/u, 'ar'],
  [/\p{Script=Hebrew}/u, 'he'],
  [/\p{Script=Cyrillic}/u, 'ru'],
];

const WORDS: Record<string, Set<string>> = {
  en: new Set('the and of to in is with for on by from this that are was'.split(' ')),
  de: new Set('der die das und ist mit von den ein eine im zu auf für nicht des dem sich'.split(' ')),
  fr: new Set('le la les et est des une un du dans pour sur avec au aux ce qui par'.split(' ')),
  es: new Set('el la los las y es del una un en con para por que se su al'.split(' ')),
  it: new Set('il la gli le e è del della di una un con per che nel sono'.split(' ')),
  nl: new Set('de het een en is van met voor op dat zijn niet ook bij'.split(' ')),
  pt: new Set('o a os as e é do da dos das um uma em com para que no na'.split(' ')),
};

export function guessLanguage(text: string | null | undefined): string | undefined {
  if (!text) return undefined;
  const sample = text.slice(0, 600);
  for (const [pattern, lang] of SCRIPTS) if (pattern.test(sample)) return lang;
  const words = sample.toLowerCase().split(/[^\p{L}]+/u).filter(Boolean);
  let best: string | undefined;
  let bestScore = 1;
  for (const [lang, common] of Object.entries(WORDS)) {
    const score = words.reduce((n, w) => n + (common.has(w) ? 1 : 0), 0);
    if (score > bestScore) [best, bestScore] = [lang, score];
  }
  return best;
}
