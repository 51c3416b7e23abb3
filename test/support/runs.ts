import { expect } from 'vitest';
import type { client } from './app.js';
import { uploadToImport, type ConsoleSession } from './console.js';
import { until } from './until.js';

type Api = ReturnType<typeof client>;

/** A run as /v1/runs shows it (docs/api.md, Runs). */
export interface Run {
  id: number; kind: string; status: string; source: string; feed_id: number | null; undone_by: number | null; error?: string | null;
  counts: Record<string, number> | null; problems: Array<Record<string, unknown>>;
}

/** Waits until a run has ended (an undo is done by the app's job runner); the run as the API then shows it. */
export async function waitForRun(api: Api, id: number): Promise<Run> {
  let run: Run | undefined;
  expect(await until(async () => {
    run = (await api.get(`/v1/runs/${id}`)).body as Run;
    return run.status !== 'queued' && run.status !== 'running';
  })).toBe(true);
  return run!;
}

/** A console import's Apply of a UTF-8 CSV whose headers are field names; the import run as /v1/runs shows it, with the summary page's text. */
export async function importFile(session: ConsoleSession, api: Api, text: string, kind: 'artworks' | 'events' = 'artworks'): Promise<Run & { summary: string }> {
  const uploaded = await uploadToImport(session, 'stock.csv', Buffer.from(text), kind);
  expect(uploaded.status).toBe(303);
  const id = /\/console\/import\/([\w-]+)$/.exec(uploaded.location ?? '')![1]!;
  const columns = await session.get(`/console/import/${id}`);
  const names = [...columns.text.matchAll(/name="(column_\d+)"/g)].map((m) => m[1]!);
  const form = Object.fromEntries(names.map((name) => [name, /<option value="([^"]*)" selected>/.exec(columns.text.split(`name="${name}"`)[1]!)![1]!]));
  expect((await session.post(`/console/import/${id}/columns`, form)).status).toBe(303);
  expect((await session.post(`/console/import/${id}/apply`)).status).toBe(303);
  let summary = '';
  expect(await until(async () => !(summary = (await session.get(`/console/import/${id}/progress`)).text).includes('id="import-bar"'))).toBe(true);
  const [run] = (await api.get('/v1/runs?limit=1')).body.runs as Run[];
  expect(run).toMatchObject({ kind: 'import', status: 'applied' });
  return { ...run!, summary };
}

