/** Types of scripts/import-cycles.mjs for the test that runs it. */
export interface ImportCycle {
  /** One circular path through the tied files (or folders): the first one again at its end. */
  circle: string[];
  /** Every file (or folder) the circle ties together, in name order. */
  files: string[];
}
export function importGraph(dir: string): Map<string, string[]>;
export function folderGraph(dir: string): Map<string, string[]>;
export function findCycles(graph: Map<string, string[]>): { circle: string[]; files: string[] }[];
export function importCycles(dir: string, options?: { base?: string; folders?: boolean }): ImportCycle[];
