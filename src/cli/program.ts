import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { migrateToLatest } from '../db/migrate.js';
import { CliError, output, printable, withDatabase } from './context.js';
import { registerBackupCommand } from './backup.js';
import { registerDemoCommand } from './demo.js';
import { registerEntityCommands } from './entity.js';
import { registerImageCommands } from './images.js';
import { registerJobsCommand } from './jobs.js';
import { addExamples, helpConfiguration } from './help.js';
import { cliIo, withCliIo, type CliIo } from './io.js';
import { registerKeyCommands } from './key.js';
import { registerPushCommand } from './push.js';
import { registerServeCommand } from './serve.js';
import { registerUserCommands } from './user.js';

/** The CLI's commands; a new program per run, because commander keeps the parsed options on it. */
function createProgram(): Command {
  const io = cliIo();
  const program = new Command('art-catalog')
    .description('Art Catalog Service: the API server and its admin and sync commands.\nEnvironment: DATABASE_URL (default sqlite:./data/art-catalog.db), see docs/operations.md for the rest.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showSuggestionAfterError(true)
    .configureHelp(helpConfiguration)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Help wraps at a terminal's width; anything else (a pipe, a test's collector) gets commander's 80.
      getOutHelpWidth: () => (io.stdout.isTTY && io.stdout.columns) || 80,
      getErrHelpWidth: () => (io.stderr.isTTY && io.stderr.columns) || 80,
      // One line on stderr: commander's "(Did you mean …?)" joins its error instead of a second line.
      // It may echo what was typed (an unknown command or option), so it is printed like any other error.
      outputError: (text, write) => write(printable(text.trim().split('\n').join(' ')) + '\n'),
    });

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
  registerJobsCommand(program);
  addExamples(program);
  return program;
}

/** The version in package.json (dist/cli/ and src/cli/ both sit two levels below it). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/**
 * Runs the CLI on `argv` (the arguments after the program's name) with these streams and environment, and
 * resolves to its exit status. bin/art-catalog runs it on the process's own; tests run it in theirs.
 * `serve` is the exception that stays a process's: it listens, handles signals and exits by itself.
 */
export function run(argv: readonly string[], io: CliIo): Promise<number> {
  return withCliIo(io, async () => {
    try {
      await createProgram().parseAsync([...argv], { from: 'user' });
      return 0;
    } catch (error) {
      // Help and version are not failures; commander has already printed its one-line error otherwise.
      if (error instanceof CommanderError) return error.exitCode;
      const message = error instanceof CliError || error instanceof Error ? error.message : String(error);
      io.stderr.write(`art-catalog: ${printable(message.split('\n')[0]!)}\n`);
      return error instanceof CliError ? error.exitCode : 1;
    }
  });
}
