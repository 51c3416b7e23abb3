import { Command, CommanderError } from 'commander';
import { migrateToLatest } from '../db/migrate.js';
import { CliError, output, printable, withDatabase } from './context.js';
import { registerDemoCommand } from './demo.js';
import { registerEntityCommands } from './entity.js';
import { registerKeyCommands } from './key.js';
import { registerPushCommand } from './push.js';
import { registerServeCommand } from './serve.js';

const program = new Command('art-catalog')
  .description('Art Catalog Service: the API server and its admin and sync commands.\nEnvironment: DATABASE_URL (default sqlite:./data/art-catalog.db), see the README for the rest.')
  .showSuggestionAfterError(true)
  .exitOverride()
  .configureOutput({ outputError: (text, write) => write(text.trim().split('\n')[0] + '\n') });

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
registerDemoCommand(program);
registerPushCommand(program);

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
