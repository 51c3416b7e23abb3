import type { Command } from 'commander';
import { DEFAULT_ROLL_GRACE, KEY_FORMAT, PREFIX_FORMAT, ROLL_GRACE, SCOPES, TIERS, TIER_SCOPES, keyPrefix, type RollGrace, type Scope, type Tier } from '../domain/keys.js';
import { toCanonicalTimestamp } from '../schemas/formats.js';
import type { ApiKeyRow } from '../db/types.js';
import { createKey, keyScopes, listKeys, revokeKey, rollKey } from '../store/keys.js';
import { CliError, entityListCommand, existingEntity, output, positiveId, withDatabase } from './context.js';

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

/**
 * The prefix named by a prefix or by a whole key: during an incident the operator pastes the key that
 * leaked, and neither the key nor any message about it may show more than its prefix.
 */
function prefixOf(given: string): string {
  const text = given.trim();
  if (KEY_FORMAT.test(text)) return keyPrefix(text);
  if (PREFIX_FORMAT.test(text)) return text;
  throw new CliError('PREFIX must be a key prefix (ak_live_ and 8 letters or digits) or a whole key');
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
        await existingEntity(db, entityId);
        return createKey(db, { entityId, tier, scopes, expiresAt });
      });
      output(opts.json, { key: clear, prefix: row.prefix, tier, scopes, expires_at: expiresAt },
        () => `${clear}\n(${tier} key ${row.prefix} for entity ${entityId}: ${scopes.join(' ')}; shown once, store it now)`);
    });

  entityListCommand(key, 'list the keys of an entity (never the full keys)', {
    list: listKeys, json: describe, none: 'no keys',
    line: (k) => `${k.prefix}\t${k.tier}\t${keyScopes(k).join(',')}\t${k.revoked_at ? `revoked ${k.revoked_at}` : k.expires_at ? `expires ${k.expires_at}` : 'active'}`,
  });

  key.command('revoke')
    .description('revoke a key by its prefix (or the whole key); it gets 401 from then on')
    .argument('<prefix>', 'the key prefix, ak_live_ and 8 characters, or the whole key')
    .option('--json', 'print one JSON object')
    .action(async (given: string, opts: { json?: boolean }) => {
      const prefix = prefixOf(given);
      const revoked = await withDatabase(({ db }) => revokeKey(db, prefix));
      if (!revoked) throw new CliError(`no active key with prefix ${prefix}`);
      output(opts.json, { prefix, revoked: true }, () => `revoked ${prefix}`);
    });

  key.command('roll')
    .description('issue a new key with the same entity, tier and scopes; the old one expires after --expire-old-in (shown once)')
    .argument('<prefix>', 'the prefix of the key to roll (or the whole key)')
    .option('--expire-old-in <time>', `when the old key stops working: ${Object.keys(ROLL_GRACE).join(', ')}`, DEFAULT_ROLL_GRACE)
    .option('--json', 'print one JSON object')
    .action(async (given: string, opts: { expireOldIn: string; json?: boolean }) => {
      const prefix = prefixOf(given);
      if (!(opts.expireOldIn in ROLL_GRACE)) throw new CliError(`--expire-old-in must be one of ${Object.keys(ROLL_GRACE).join(', ')} (got "${opts.expireOldIn}")`);
      const oldExpiresAt = new Date(Date.now() + ROLL_GRACE[opts.expireOldIn as RollGrace]).toISOString();
      const rolled = await withDatabase(({ db }) => rollKey(db, prefix, oldExpiresAt));
      if (!rolled) throw new CliError(`no active key with prefix ${prefix}`);
      const { key: clear, row, old } = rolled;
      output(opts.json, {
        key: clear, prefix: row.prefix, tier: row.tier, scopes: keyScopes(row), expires_at: row.expires_at,
        old: { prefix: old.prefix, expires_at: old.expires_at },
      }, () => `${clear}\n(new ${row.tier} key ${row.prefix}; ${old.prefix} expires ${old.expires_at}; shown once, store it now)`);
    });
}
