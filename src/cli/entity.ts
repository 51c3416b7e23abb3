import type { Command } from 'commander';
import { isCountryCode } from '../schemas/codes.js';
import { slugify } from '../domain/slug.js';
import type { EntityRow } from '../db/types.js';
import { ENTITY_TYPES, type EntityKind } from '../schemas/profile.js';
import { TIERS, type Tier } from '../domain/keys.js';
import { createEntity, listEntities, setPaused, updateEntity } from '../store/entities.js';
import { endSessionsOfEntity } from '../store/users.js';
import { hasControlCharacters } from '../domain/text.js';
import { CliError, output, positiveId, printable, withDatabase } from './context.js';

const summary = (e: EntityRow) => ({ id: e.id, type: e.type, name: e.name, slug: e.slug });
const describe = (e: EntityRow) => ({
  ...summary(e), location_city: e.location_city, location_country: e.location_country, plan: e.plan,
  paused: e.paused_at !== null, created_at: e.created_at,
});
const line = (e: EntityRow) =>
  `${e.id}\t${e.type}\t${e.slug}\t${printable(e.name)}${e.paused_at ? '\t(paused)' : ''}`;

/** Text the operator gives is shown on public pages, feeds and in listings: no control or format characters. */
function checkText(option: string, text: string | undefined): void {
  if (text !== undefined && hasControlCharacters(text)) {
    throw new CliError(`${option} must not contain control characters (line breaks, tabs, escapes) or invisible format characters (U+200B, U+202E, …); got "${printable(text)}"`, 2);
  }
}

function checkName(name: string): string {
  checkText('--name', name);
  const trimmed = name.trim();
  if (slugify(trimmed) === '') throw new CliError('--name must not be empty');
  if (trimmed.length > 500) throw new CliError('--name must be at most 500 characters');
  return trimmed;
}

function checkCountry(country: string | undefined): string | undefined {
  if (country === undefined || country === '') return country;
  if (!isCountryCode(country)) throw new CliError(`--country must be an ISO 3166-1 alpha-2 code (got "${country}")`);
  return country.toUpperCase();
}

export function registerEntityCommands(program: Command): void {
  const entity = program.command('entity').description('manage galleries and artists');

  entity.command('create')
    .description('create a gallery or an artist')
    .requiredOption('--type <type>', 'gallery or artist')
    .requiredOption('--name <name>', 'display name; the profile slug is derived from it')
    .option('--city <city>', 'location city')
    .option('--country <cc>', 'ISO 3166-1 alpha-2 country code')
    .option('--json', 'print one JSON object')
    .action(async (opts: { type: string; name: string; city?: string; country?: string; json?: boolean }) => {
      if (!ENTITY_TYPES.includes(opts.type as EntityKind)) throw new CliError(`--type must be gallery or artist (got "${opts.type}")`);
      checkText('--city', opts.city);
      const spec = { type: opts.type as EntityKind, name: checkName(opts.name), city: opts.city, country: checkCountry(opts.country) };
      const row = await withDatabase(({ db }) => createEntity(db, spec));
      output(opts.json, summary(row), () => `created ${row.type} ${row.id} "${printable(row.name)}" (slug ${row.slug})`);
    });

  entity.command('list')
    .description('list every entity')
    .option('--json', 'print a JSON array')
    .action(async (opts: { json?: boolean }) => {
      const rows = await withDatabase(({ db }) => listEntities(db));
      output(opts.json, rows.map(describe), () => (rows.length ? rows.map(line).join('\n') : 'no entities'));
    });

  entity.command('update')
    .description('change fields the API cannot write (the slug stays, so public links keep working)')
    .argument('<id>', 'entity id')
    .option('--name <name>', 'display name')
    .option('--city <city>', 'location city ("" clears)')
    .option('--country <cc>', 'ISO 3166-1 alpha-2 country code ("" clears)')
    .option('--plan <tier>', 'free, subscriber or partner: the highest key tier its console may create')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { name?: string; city?: string; country?: string; plan?: string; json?: boolean }) => {
      checkText('--city', opts.city);
      if (opts.plan !== undefined && !TIERS.includes(opts.plan as Tier)) throw new CliError(`--plan must be one of ${TIERS.join(', ')} (got "${opts.plan}")`);
      const changes = {
        name: opts.name === undefined ? undefined : checkName(opts.name),
        city: opts.city,
        country: checkCountry(opts.country),
        plan: opts.plan as Tier | undefined,
      };
      const row = await withDatabase(({ db }) => updateEntity(db, positiveId(id), changes));
      output(opts.json, describe(row), () => `updated ${line(row)}`);
    });

  for (const [name, paused] of [['pause', true], ['resume', false]] as const) {
    entity.command(name)
      .description(paused ? 'pause an entity: its keys get 403, its public pages 404' : 'resume a paused entity')
      .argument('<id>', 'entity id')
      .option('--json', 'print one JSON object')
      .action(async (id: string, opts: { json?: boolean }) => {
        const row = await withDatabase(async ({ db }) => {
          const changed = await setPaused(db, positiveId(id), paused);
          // Its console users are signed out at once (the guard also refuses a paused entity's sessions).
          if (paused) await endSessionsOfEntity(db, changed.id);
          return changed;
        });
        output(opts.json, describe(row), () => `${paused ? 'paused' : 'resumed'} ${row.type} ${row.id} "${printable(row.name)}"`);
      });
  }
}
