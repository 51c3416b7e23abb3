// Finds circles of imports between the files of a source tree: `node scripts/import-cycles.mjs [DIR]`
// (default src/); with --folders, between the tree's top-level folders (its rooms). Every import counts — `import type`, re-exports and dynamic `import()` too — since
// a circle of any kind ties the files' meaning together. Prints each circle as a path of files and
// exits 1 when there is one. test/unit/import-cycles.test.ts runs it on src/ and on fixtures.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The TypeScript files under a folder. */
function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a relative specifier names: `./x.js` is `./x.ts`, a folder its index. */
function resolveImport(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const candidates = [base.replace(/\.(m?)js$/, '.$1ts'), base, `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((path) => /\.(ts|mts)$/.test(path) && existsSync(path) && statSync(path).isFile());
}

/** Each file's imports within the tree, by absolute path. */
export function importGraph(dir) {
  const root = resolve(dir);
  const graph = new Map();
  for (const file of sourceFiles(root)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles.map((imported) => resolveImport(file, imported.fileName)).filter((path) => path?.startsWith(root));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/**
 * The circles of a graph: its strongly connected components of more than one file, or a file that
 * imports itself (Tarjan's algorithm, iterative so that deep trees do not overflow the stack). Each
 * is given as one circular path through it, starting at its first file in name order.
 */
export function findCycles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  for (const start of [...graph.keys()].sort()) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, next); low.set(start, next); next += 1; stack.push(start); onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, i] = frame;
      const edges = graph.get(node) ?? [];
      if (i < edges.length) {
        frame[1] += 1;
        const target = edges[i];
        if (!index.has(target)) {
          index.set(target, next); low.set(target, next); next += 1; stack.push(target); onStack.add(target);
          work.push([target, 0]);
        } else if (onStack.has(target)) {
          low.set(node, Math.min(low.get(node), index.get(target)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === index.get(node)) {
        const component = [];
        let member;
        do { member = stack.pop(); onStack.delete(member); component.push(member); } while (member !== node);
        if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component);
      }
    }
  }
  return components.map((component) => ({ circle: circleThrough(graph, component), files: component.sort() }))
    .sort((a, b) => a.files[0].localeCompare(b.files[0]));
}

/** A shortest circular path from the component's first file back to it, within the component. */
function circleThrough(graph, component) {
  const members = new Set(component);
  const first = [...component].sort()[0];
  const previous = new Map();
  const queue = [first];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === first) {
        const path = [node];
        while (path[0] !== first) path.unshift(previous.get(path[0]));
        return [...path, first];
      }
      if (!previous.has(target)) { previous.set(target, node); queue.push(target); }
    }
  }
  return [first, first];
}

/**
 * The same graph between the tree's top-level folders (a file directly in the tree is its own
 * "folder"): an edge wherever one file imports a file of another folder.
 */
export function folderGraph(dir) {
  const root = resolve(dir);
  const folderOf = (file) => relative(root, file).split(/[\\/]/)[0];
  const folders = new Map();
  for (const [file, targets] of importGraph(dir)) {
    const from = join(root, folderOf(file));
    const edges = folders.get(from) ?? new Set();
    for (const target of targets) if (folderOf(target) !== folderOf(file)) edges.add(join(root, folderOf(target)));
    folders.set(from, edges);
  }
  return new Map([...folders].map(([folder, edges]) => [folder, [...edges]]));
}

/**
 * The circles of a source tree between files (or, with `folders`, between its top-level folders),
 * each as one circular path and the set of files (folders) tied together, relative to `base`.
 */
export function importCycles(dir, { base = process.cwd(), folders = false } = {}) {
  const name = (path) => relative(base, path);
  return findCycles(folders ? folderGraph(dir) : importGraph(dir)).map(({ circle, files }) => ({ circle: circle.map(name), files: files.map(name) }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const folders = process.argv.includes('--folders');
  const dir = process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? 'src';
  const circles = importCycles(dir, { folders });
  for (const { circle, files } of circles) {
    console.log(circle.join(' → '));
    if (files.length > circle.length - 1) console.log(`  tying together: ${files.join(', ')}`);
  }
  const kind = folders ? 'folders' : 'files';
  console.log(circles.length === 0 ? `no import circles between the ${kind} of ${dir}` : `${circles.length} import circle(s) between the ${kind} of ${dir}`);
  process.exitCode = circles.length === 0 ? 0 : 1;
}
