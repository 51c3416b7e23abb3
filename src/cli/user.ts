import type { Command } from 'commander';
import type { Role, UserRow } from '../db/types.js';
import { newSecret, sha256 } from '../domain/passwords.js';
import { isEmailAddress } from '../domain/text.js';
import { EmailTaken, INVITE_TTL_MS, inviteUser, listUsers, removeUser } from '../store/users.js';
import { loadConfig } from '../config.js';
import { CliError, entityListCommand, existingEntity, output, positiveId, printable, withDatabase } from './context.js';
import { cliIo } from './io.js';

const ROLES: readonly Role[] = ['owner', 'editor', 'viewer'];

function parseRole(raw: string | undefined): Role | undefined {
  if (raw !== undefined && !ROLES.includes(raw as Role)) throw new CliError(`--role must be one of ${ROLES.join(', ')} (got "${raw}")`);
  return raw as Role | undefined;
}

function parseEmail(raw: string): string {
  const email = raw.trim();
  if (!isEmailAddress(email)) throw new CliError(`not an email address: "${printable(raw)}"`);
  return email;
}

const describe = (u: UserRow) => ({
  email: u.email, role: u.role, active: u.password_hash !== null,
  invite_expires_at: u.invite_expires_at, created_at: u.created_at,
});

export function registerUserCommands(program: Command): void {
  const user = program.command('user').description('invite, list and remove the people who use the gallery console');

  user.command('invite')
    .description('invite a person to an entity\'s console (again: a password reset); prints a one-time link valid 72 h')
    .requiredOption('--entity <id>', 'entity id')
    .requiredOption('--email <address>', 'the person\'s email (one email belongs to one entity)')
    .option('--role <role>', 'owner, editor or viewer (default editor; an existing user keeps theirs)')
    .option('--json', 'print one JSON object')
    .action(async (opts: { entity: string; email: string; role?: string; json?: boolean }) => {
      const entityId = positiveId(opts.entity, '--entity');
      const email = parseEmail(opts.email);
      const role = parseRole(opts.role);
      const token = newSecret();
      const expiresAt = new Date(Date.now() + INVITE_TTL_MS).toISOString();
      const row = await withDatabase(async ({ db }) => {
        await existingEntity(db, entityId);
        return inviteUser(db, { entityId, email, role, inviteHash: sha256(token), expiresAt }).catch((error: unknown) => {
          if (error instanceof EmailTaken) throw new CliError(`${email} already belongs to entity ${error.entityId}; one email belongs to one entity`);
          throw error;
        });
      });
      const config = loadConfig(cliIo().env);
      const link = `${config.publicBaseUrl}/console/invite/${token}`;
      // The link is built here, from this shell's settings, not the server's: say where it points.
      if (config.publicBaseUrlIsDefault) {
        cliIo().stderr.write(`the link points to ${config.publicBaseUrl}, built from PORT and HOST because PUBLIC_BASE_URL is unset here; `
          + 'if the server answers elsewhere (another PORT, a domain), set PUBLIC_BASE_URL to its address and invite again\n');
      }
      output(opts.json, { email: row.email, role: row.role, link, expires_at: expiresAt },
        () => `${link}\n(${row.role} invite for ${row.email}, valid until ${expiresAt}; it works once)`);
    });

  entityListCommand(user, 'list the console users of an entity', {
    list: listUsers, json: describe, none: 'no users',
    line: (u) => `${u.email}\t${u.role}\t${u.password_hash ? 'active' : `invited until ${u.invite_expires_at ?? '-'}`}`,
  });

  user.command('remove')
    .description('remove a user; their sessions end at once')
    .argument('<email>', 'the user\'s email')
    .option('--json', 'print one JSON object')
    .action(async (email: string, opts: { json?: boolean }) => {
      const removed = await withDatabase(({ db }) => removeUser(db, email));
      if (!removed) throw new CliError(`no user with email ${printable(email)}`);
      output(opts.json, { email: email.trim().toLowerCase(), removed: true }, () => `removed ${email.trim().toLowerCase()}`);
    });
}
