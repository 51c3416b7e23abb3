/**
 * The candidate `name` most likely meant: the closest by edit distance when close enough to be a
 * misspelling ("titel" → "title"), else one that has `name` as a part ("year" → "creation_year").
 */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  // Only a candidate within `close` edits is offered, and an edit distance is at least the difference
  // of the lengths: a candidate farther in length than that is never measured. So the work is bounded
  // by the candidates' lengths (a field name), whatever the length of `name` (docs/api.md, Bounds on
  // what a file may hold).
  const close = Math.max(2, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (Math.abs(name.length - candidate.length) > close) continue;
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  if (bestDistance <= close) return best;
  return candidates.find((candidate) => candidate.split('_').includes(name));
}

/** Levenshtein distance, with a swap of two neighbours counting as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}
