// Lists every test vitest would run, per project, as "project | file | suite > test" lines (sorted), so two
// checkouts can be compared: node scripts/test-names.mjs OUT.txt  (runs `vitest list`, collecting by running
// the files, not statically: skipIf, runIf and test.each only show up that way).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const out = process.argv[2] ?? 'test-output/test-names.txt';
const json = join(mkdtempSync(join(tmpdir(), 'test-names-')), 'list.json');
execFileSync('npx', ['vitest', 'list', '--staticParse=false', `--json=${json}`], { stdio: ['ignore', 'ignore', 'inherit'] });
const tests = JSON.parse(readFileSync(json, 'utf8'));
const lines = tests.map((t) => `${t.projectName} | ${relative(process.cwd(), t.file)} | ${t.name}`).sort();
writeFileSync(out, lines.join('\n') + '\n');
console.log(`${lines.length} tests listed in ${out}`);
