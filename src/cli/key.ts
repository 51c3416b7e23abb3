import type { Command } from 'commander';
import { SCOPES, TIERS, TIER_SCOPES, type Scope, type Tier } from '../domain/keys.js';
import { toCanonicalTimestamp } from '../schemas/formats.js';
import type { ApiKeyRow } from '../db/types.js';
import { findEntity } from '../store/entities.js';
import { createKey, keyScopes, listKeys, revokeKey } from '../store/keys.js';
import { CliError, output, positiveId, withDatabase } from './context.js';

function parseTier(raw: string): Tier {
  if (!TIERS.includes(raw as Tier)) throw new CliError(`--tier must be one of ${TIERS.join(', ')} (got "${raw}")`);
  return raw as Tier;
}

/** `--scopes` narrows a key to part of its tier's scopes; anything outside the tier is refused. */
function parseScopes(raw: string | undefined, tier: Tier): Scope[] {
  if (raw === undefined) return [...TIER_SCOPES[tier]];
  const scopes = [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))];
  if (scopes.length === 0) throw new CliError('--scopes must name at least one scope');
  for (const scope of scopes) {
    if (!SCOPES.includes(scope as Scope)) throw new CliError(`unknown scope "${scope}"; scopes are ${SCOPES.join(', ')}`);
    if (!TIER_SCOPES[tier].includes(scope as Scope)) throw new CliError(`scope ${scope} is not available to the ${tier} tier`);
  }
  return scopes as Scope[];
}

function parseExpiry(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const at = toCanonicalTimestamp(raw);
  if (!at) throw new CliError(`--expires-at must be an ISO 8601 timestamp (got "${raw}")`);
  return at;
}

const describe = (k: ApiKeyRow) => ({
  prefix: k.prefix, tier: k.tier, scopes: keyScopes(k), expires_at: k.expires_at,
  revoked_at: k.revoked_at, created_at: k.created_at, last_used_at: k.last_used_at,
});

export function registerKeyCommands(program: Command): void {
  const key = program.command('key').description('issue, list and revoke API keys');

  key.command('create')
    .description('issue a key bound to one entity; the full key is shown once and only its hash is stored')
    .requiredOption('--entity <id>', 'entity id')
    .option('--tier <tier>', 'free, subscriber or partner', 'subscriber')
    .option('--scopes <list>', 'comma-separated subset of the tier\'s scopes (default: all of them)')
    .option('--expires-at <iso8601>', 'expiry time (a past time is accepted)')
    .option('--json', 'print one JSON object')
    .action(async (opts: { entity: string; tier: string; scopes?: string; expiresAt?: string; json?: boolean }) => {
      const entityId = positiveId(opts.entity, '--entity');
      const tier = parseTier(opts.tier);
      const scopes = parseScopes(opts.scopes, tier);
      const expiresAt = parseExpiry(opts.expiresAt);
      const { key: clear, row } = await withDatabase(async ({ db }) => {
        if (!(await findEntity(db, entityId))) throw new CliError(`no entity with id ${entityId}`);
        return createKey(db, { entityId, tier, scopes, expiresAt });
      });
      output(opts.json, { key: clear, prefix: row.prefix, tier, scopes, expires_at: expiresAt },
        () => `${clear}\n(${tier} key ${row.prefix} for entity ${entityId}: ${scopes.join(' ')}; shown once, store it now)`);
    });

  key.command('list')
    .description('list the keys of an entity (never the full keys)')
    .requiredOption('--entity <id>', 'entity id')
    .option('--json', 'print a JSON array')
    .action(async (opts: { entity: string; json?: boolean }) => {
      const entityId = positiveId(opts.entity, '--entity');
      const rows = await withDatabase(async ({ db }) => {
        if (!(await findEntity(db, entityId))) throw new CliError(`no entity with id ${entityId}`);
        return listKeys(db, entityId);
      });
      output(opts.json, rows.map(describe), () => (rows.length === 0 ? 'no keys' : rows.map((k) =>
        `${k.prefix}\t${k.tier}\t${keyScopes(k).join(',')}\t${k.revoked_at ? `revoked ${k.revoked_at}` : k.expires_at ? `expires ${k.expires_at}` : 'active'}`).join('\n')));
    });

  key.command('revoke')
    .description('revoke a key by its prefix; it gets 401 from then on')
    .argument('<prefix>', 'the key prefix, ak_live_ and 8 characters')
    .option('--json', 'print one JSON object')
    .action(async (prefix: string, opts: { json?: boolean }) => {
      const revoked = await withDatabase(({ db }) => revokeKey(db, prefix));
      if (!revoked) throw new CliError(`no active key with prefix ${prefix}`);
      output(opts.json, { prefix, revoked: true }, () => `revoked ${prefix}`);
    });
}
