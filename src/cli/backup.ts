import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { backup } from '../db/backup.js';
import { output } from './context.js';
import { cliIo } from './io.js';

/** `backup FILE`: a consistent copy of the live database (restoring: docs/deploy.md, "Backups"). */
export function registerBackupCommand(program: Command): void {
  program.command('backup')
    .description('write a consistent copy of the live database to FILE: SQLite online backup, or pg_dump --format=custom for PostgreSQL')
    .argument('<file>', 'where to write the backup (must not exist)')
    .option('--json', 'print one JSON object')
    .action(async (file: string, opts: { json?: boolean }) => {
      const result = await backup(loadConfig(cliIo().env).databaseUrl, file);
      output(opts.json, result, () => `backed up the ${result.dialect} database to ${result.file} (${result.bytes} bytes, ${result.method})`);
    });
}
