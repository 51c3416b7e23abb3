// bin/art-catalog's program on the process's own arguments, streams and environment (src/cli/program.ts).
import { run } from './program.js';

const code = await run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
// `serve` returns once it listens and exits by itself on a signal; setting 0 then keeps it running.
if (code !== 0) process.exitCode = code;
