import { Help, type Command, type Option } from 'commander';

/** One example per command, shown at the end of its `--help`; keyed by the command's path. */
const EXAMPLES: Record<string, string> = {
  'serve': 'DATABASE_URL=postgres://art@db/artcatalog PORT=3001 art-catalog serve',
  'migrate': 'DATABASE_URL=postgres://art@db/artcatalog art-catalog migrate',
  'entity create': 'art-catalog entity create --type gallery --name "Galerie Nord" --city Berlin --country DE',
  'entity list': 'art-catalog entity list --json',
  'entity update': 'art-catalog entity update 12 --name "Galerie Nord & Süd" --city Hamburg --plan partner',
  'entity pause': 'art-catalog entity pause 12',
  'entity resume': 'art-catalog entity resume 12',
  'key create': 'art-catalog key create --entity 12 --tier free --scopes artworks:read,events:read',
  'key list': 'art-catalog key list --entity 12',
  'key revoke': 'art-catalog key revoke ak_live_3fK9xQ2b',
  'key roll': 'art-catalog key roll ak_live_3fK9xQ2b --expire-old-in 7d',
  'user invite': 'art-catalog user invite --entity 12 --email anna@galerie.example --role owner',
  'user list': 'art-catalog user list --entity 12',
  'user remove': 'art-catalog user remove anna@galerie.example',
  'demo': 'PORT=3001 art-catalog demo --base-url http://localhost:3001',
  'push': 'ART_CATALOG_URL=https://catalog.example.org ART_CATALOG_KEY=ak_live_… art-catalog push works.csv --kind artworks',
  'backup': 'art-catalog backup /var/backups/art-catalog-$(date +%F).db',
  'images status': 'art-catalog images status --entity 12',
  'images retry': 'art-catalog images retry --entity 12 --failed',
  'images sweep': 'art-catalog images sweep --json',
  'jobs': 'art-catalog jobs --entity 12',
};

const pathOf = (command: Command): string =>
  command.parent?.parent ? `${pathOf(command.parent)} ${command.name()}` : command.name();

/**
 * Adds its example to every command that runs something; one without an example is a mistake, so
 * the CLI refuses to start (and its tests fail) rather than ship a help page without one.
 */
export function addExamples(command: Command): void {
  for (const sub of command.commands) {
    if (sub.commands.length > 0) {
      addExamples(sub);
      continue;
    }
    const example = EXAMPLES[pathOf(sub)];
    if (!example) throw new Error(`the command "${pathOf(sub)}" has no example in src/cli/help.ts`);
    sub.addHelpText('after', `\nExample:\n  $ ${example}`);
  }
}

/** Help that marks the options a command cannot run without (commander's requiredOption). */
export const helpConfiguration: Partial<Help> = {
  optionDescription(this: Help, option: Option): string {
    const text = Help.prototype.optionDescription.call(this, option);
    return option.mandatory ? `(required) ${text}` : text;
  },
};
