import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { migrateToLatest } from '../db/migrate.js';
import { CliError, output, printable, withDatabase } from './context.js';
import { registerBackupCommand } from './backup.js';
import { registerDemoCommand } from './demo.js';
import { registerEntityCommands } from './entity.js';
import { registerImageCommands } from './images.js';
import { addExamples, helpConfiguration } from './help.js';
import { registerKeyCommands } from './key.js';
import { registerPushCommand } from './push.js';
import { registerServeCommand } from './serve.js';
import { registerUserCommands } from './user.js';

const program = new Command('art-catalog')
  .description('Art Catalog Service: the API server and its admin and sync commands.\nEnvironment: DATABASE_URL (default sqlite:./data/art-catalog.db), see docs/operations.md for the rest.')
  .version(packageVersion(), '-V, --version', 'print the version')
  .showSuggestionAfterError(true)
  .configureHelp(helpConfiguration)
  .exitOverride()
  // One line on stderr: commander's "(Did you mean …?)" joins its error instead of a second line.
  // It may echo what was typed (an unknown command or option), so it is printed like any other error.
  .configureOutput({ outputError: (text, write) => write(printable(text.trim().split('\n').join(' ')) + '\n') });

registerServeCommand(program);
program.command('migrate')
  .description('apply pending database migrations')
  .option('--json', 'print one JSON object')
  .action(async (opts: { json?: boolean }) => {
    const applied = await withDatabase((handle) => migrateToLatest(handle), { migrate: false });
    output(opts.json, { applied }, () => (applied.length ? `applied ${applied.join(', ')}` : 'database is up to date'));
  });
registerEntityCommands(program);
registerKeyCommands(program);
registerUserCommands(program);
registerDemoCommand(program);
registerPushCommand(program);
registerBackupCommand(program);
registerImageCommands(program);
addExamples(program);

/** The version in package.json (dist/cli/ and src/cli/ both sit two levels below it). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Help and version are not failures; commander has already printed its one-line error otherwise.
    process.exitCode = error.exitCode;
  } else {
    const message = error instanceof CliError || error instanceof Error ? error.message : String(error);
    process.stderr.write(`art-catalog: ${printable(message.split('\n')[0]!)}\n`);
    process.exitCode = error instanceof CliError ? error.exitCode : 1;
  }
}
