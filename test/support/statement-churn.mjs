// Prepares 30,000 SQLite statements in a row and drops each, so that V8 collects statements while the
// loop runs. better-sqlite3 12 aborted the process there on Node >= 24.19 ("Assertion failed: (env) !=
// nullptr" in Statement::~Statement; 5 runs of 8 on this machine). A process that prints "survived"
// and exits 0 did not abort.
import { createRequire } from 'node:module';

const Database = createRequire(import.meta.url)('better-sqlite3');
const db = new Database(':memory:');
for (let i = 0; i < 30_000; i++) db.prepare(`select ${i}`).all();
console.log('survived');
