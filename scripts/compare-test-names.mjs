// Compares two lists written by scripts/test-names.mjs ("project | file | suite > test" lines): which tests of
// the old list keep their name, which keep their title under a renamed describe, which changed title (to be
// named in the change's note), and which ran on PostgreSQL before and no longer do, by the folder they are in now
// (test/README.md says why a folder is or is not in the postgres project).
//   node scripts/compare-test-names.mjs OLD.txt NEW.txt
import { readFileSync } from 'node:fs';

const [oldFile, newFile] = process.argv.slice(2);
if (!oldFile || !newFile) throw new Error('usage: node scripts/compare-test-names.mjs OLD.txt NEW.txt');
const parse = (file) => readFileSync(file, 'utf8').trim().split('\n').map((line) => {
  const [project, path, ...name] = line.split(' | ');
  return { project, path, name: name.join(' | ') };
});
const before = parse(oldFile);
const after = parse(newFile);
const title = (name) => name.split(' > ').at(-1);
const afterNames = new Set(after.map((t) => t.name));
const afterByTitle = Map.groupBy(after, (t) => title(t.name));

const names = [...new Set(before.map((t) => t.name))];
const kept = names.filter((name) => afterNames.has(name));
const movedSuite = names.filter((name) => !afterNames.has(name) && afterByTitle.has(title(name)));
const changed = names.filter((name) => !afterNames.has(name) && !afterByTitle.has(title(name)));
const count = (list, project) => list.filter((t) => t.project === project).length;
for (const [label, list] of [['before', before], ['after', after]]) {
  console.log(`${label}: ${list.length} test runs (unit ${count(list, 'unit')}, sqlite ${count(list, 'sqlite')}, postgres ${count(list, 'postgres')}), ${new Set(list.map((t) => t.name)).size} distinct tests`);
}
console.log(`of the ${names.length} tests before: ${kept.length} keep their name, ${movedSuite.length} keep their title under a renamed describe, ${changed.length} changed title:`);
for (const name of changed) console.log(`  - ${before.find((t) => t.name === name).path} :: ${name}`);

const onPostgresAfter = new Set(after.filter((t) => t.project === 'postgres').map((t) => title(t.name)));
const leftPostgres = Map.groupBy(before.filter((t) => t.project === 'postgres' && !onPostgresAfter.has(title(t.name))),
  (t) => afterByTitle.get(title(t.name))?.[0].path.split('/').slice(0, 2).join('/') ?? '(title changed)');
console.log('ran on PostgreSQL before and not now, by the folder they are in now:');
for (const [folder, tests] of leftPostgres) console.log(`  ${folder}: ${tests.length}`);
