/**
 * Who may import whom among the rooms of src/ (docs/architecture.md, Layers): for each room, the rooms it
 * may import, and why. This is the one list: a room imports no other room outside it (config.ts and
 * clock.ts, the loose files at the top of src/, excepted). eslint.config.js turns it into the layering
 * rule; test/contract/lint.test.ts checks that every folder of src/ is listed, and
 * test/unit/docs-follow-code.test.ts writes the Layers table of docs/architecture.md from it.
 */
export const ROOMS = {
  schemas: [[], 'the contract depends on nothing of the service'],
  domain: [['schemas'], 'pure rules, no I/O'],
  fetch: [[], 'outbound HTTP with its guards, for any caller'],
  secrets: [[], 'the server key and what it seals, for any caller that keeps a secret at rest'],
  client: [['schemas'], 'the client ships without the server'],
  db: [['domain', 'schemas', 'secrets'], 'the database layer knows no resource (a migration may seal what it moves)'],
  import: [['domain', 'schemas'], 'one file reader and planner for push, the console and feeds, with none of them inside'],
  store: [['db', 'domain', 'schemas', 'secrets'], 'the store answers to any caller'],
  jobs: [['db', 'domain', 'store'], 'the one job queue serves images, feeds and webhooks alike'],
  coordination: [['db', 'domain', 'store'], 'shared state (counters, locks) knows no HTTP'],
  'http-common': [['coordination', 'db', 'domain', 'schemas'], 'HTTP helpers the API, the public pages and the console share: no app, no route'],
  images: [['db', 'domain', 'fetch', 'jobs', 'schemas', 'store'], 'the image pipeline serves the server, the console and the CLI alike'],
  apply: [['db', 'domain', 'import', 'schemas', 'store'], 'previews and applies a read file for the console and feeds alike, through src/store'],
  feeds: [['db', 'domain', 'fetch', 'import', 'apply', 'jobs', 'schemas', 'store'], 'feeds are pulled by a job, and know no HTTP route'],
  webhooks: [['db', 'domain', 'fetch', 'images', 'jobs', 'http-common', 'schemas', 'store'], 'deliveries are a job, and know no HTTP route'],
  web: [['coordination', 'db', 'domain', 'images', 'http-common', 'schemas', 'store'], 'public pages know nothing of the console or the API\'s app'],
  console: [['db', 'domain', 'feeds', 'images', 'import', 'apply', 'http-common', 'schemas', 'store', 'web', 'webhooks'], 'the console writes through src/store, as the API does, and knows nothing of the API\'s app'],
  http: [['coordination', 'console', 'db', 'domain', 'feeds', 'fetch', 'images', 'import', 'jobs', 'http-common', 'schemas', 'secrets', 'store', 'web', 'webhooks'], 'the app registers the API, the public pages and the console'],
  cli: [['client', 'coordination', 'db', 'domain', 'feeds', 'fetch', 'http', 'images', 'import', 'apply', 'jobs', 'http-common', 'schemas', 'secrets', 'store', 'web', 'webhooks', 'console'], 'the commands start everything'],
};
