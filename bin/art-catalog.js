// The CLI's entry, started by bin/art-catalog on whichever Node.js it found. better-sqlite3 13 crashes
// Node 20 (a segmentation fault, no message), so the version is checked before anything is loaded.
// Kept to syntax every Node.js parses, so an old one gets this line rather than a syntax error.
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  const root = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
  process.stderr.write(`art-catalog: Node.js ${process.versions.node} is too old (22, 24 or 26 needed); run npm ci in ${root} to bring Node 24, or install Node.js 24\n`);
  process.exit(1);
}
// Node keeps the code it compiled for our modules and their dependencies between runs (in the system's
// temp folder, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off; a changed file is compiled
// anew): a server starts with ~0.15 s less CPU, a CLI command ~0.05 s (docs/performance.md).
const { default: nodeModule } = await import('node:module');
nodeModule.enableCompileCache?.();
await import('../dist/cli/main.js');
