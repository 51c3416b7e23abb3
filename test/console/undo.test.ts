import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';
import { signedIn } from '../support/console.js';
import { csv } from '../support/file-server.js';
import { importFile, waitForRun } from '../support/runs.js';

/** The console's Runs and Undo through real HTTP (docs/console.md, Runs): what it will do first, the form guarded, a 409 said in words. */

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await startApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
}, 120_000);
afterAll(async () => t?.close());

describe('Undo in the console', { timeout: 120_000 }, () => {
  test('the Undo form without its CSRF token, with a forged one or from another site is 403 and undoes nothing; a viewer gets 403; a second Undo is a 409 page', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const editor = await signedIn(t, base, g.entityId, 'editor');
    const run = await importFile(editor, api, csv('title;external_id', 'One;C1', 'Two;C2'));
    // The import's summary names its run, whose page offers the Undo.
    expect(run.summary).toContain(`This import is <a href="/console/runs/${run.id}">run ${run.id}</a>`);
    const page = await editor.get(`/console/runs/${run.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('2 records</strong> it created go to the');

    const path = `/console/runs/${run.id}/undo`;
    const answers = await Promise.all([
      editor.request('POST', path, new URLSearchParams({})),
      editor.post(path, { _csrf: 'forged-token' }),
      editor.post(path, {}, { origin: 'https://evil.example' }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([403, 403, 403]);
    const viewer = await signedIn(t, base, g.entityId, 'viewer');
    expect((await viewer.get(`/console/runs/${run.id}`)).status).toBe(403);
    expect((await viewer.post(path, {})).status).toBe(403);
    expect((await api.get(`/v1/runs/${run.id}`)).body.undone_by).toBeNull();

    const undone = await editor.post(path, {});
    expect(undone.status).toBe(303);
    const undoId = Number(/\/console\/runs\/(\d+)$/.exec(undone.location ?? '')![1]);
    expect(await waitForRun(api, undoId)).toMatchObject({ status: 'applied', counts: { deleted: 2 } });
    const again = await editor.post(path, {});
    expect(again.status).toBe(409);
    expect(again.text).toContain(`was undone already, by run ${undoId}`);
    // Another gallery's run is not found.
    const other = await signedIn(t, base, (await tenant(t)).entityId, 'editor');
    expect((await other.get(`/console/runs/${run.id}`)).status).toBe(404);
    expect((await other.post(path, {})).status).toBe(404);
  });
});
