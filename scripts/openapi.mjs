#!/usr/bin/env node
// Writes the OpenAPI document the server serves at /v1/openapi.json to a file (or stdout), from the
// built app on an in-memory database: what `npm run lint:openapi` lints. Run `npm run build` first.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { buildApp } from '../dist/http/app.js';
import { loadConfig } from '../dist/config.js';

const app = await buildApp({ config: loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'https://catalog.example' }), logger: false });
try {
  const response = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
  if (response.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${response.statusCode}`);
  const text = `${JSON.stringify(JSON.parse(response.body), null, 2)}\n`;
  if (process.argv[2]) {
    mkdirSync(dirname(process.argv[2]), { recursive: true });
    writeFileSync(process.argv[2], text);
  }
  else process.stdout.write(text);
} finally {
  await app.close();
}
