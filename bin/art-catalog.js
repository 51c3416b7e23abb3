// The CLI's entry, started by bin/art-catalog on whichever Node.js it found. better-sqlite3 13 crashes
// Node 20 (a segmentation fault, no message), so the version is checked before anything but Node's own
// modules is loaded.
// Kept to syntax every Node.js parses, so an old one gets this line rather than a syntax error.
import nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  const root = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
  process.stderr.write(`art-catalog: Node.js ${process.versions.node} is too old (22, 24 or 26 needed); run npm ci in ${root} to bring Node 24, or install Node.js 24\n`);
  process.exit(1);
}
// Node keeps the code it compiled for our modules and their dependencies between runs: a server starts
// with ~0.15 s less CPU, a CLI command ~0.05 s (docs/performance.md). In the install's own
// node_modules/.cache (or NODE_COMPILE_CACHE), never in the shared temp folder, where another user of the
// machine could leave compiled code for us to run. A changed file is compiled anew; a folder that cannot be
// written is no error (the cache is then off); NODE_DISABLE_COMPILE_CACHE=1 turns it off.
nodeModule.enableCompileCache?.(process.env.NODE_COMPILE_CACHE || fileURLToPath(new URL('../node_modules/.cache/node-compile-cache', import.meta.url)));
await import('../dist/cli/main.js');
