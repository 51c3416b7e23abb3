import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { signedIn, uploadToImport as upload, type ConsoleSession } from '../support/console.js';

/**
 * What one gallery's uploads cannot do to another's (docs/console.md, Import), through real HTTP: the
 * process's read turns go to a waiting gallery before the gallery that already reads, and past the
 * budget of held tables the gallery holding the most makes room from its own uploads.
 */

const uploadId = (location: string | null) => /\/console\/import\/([\w-]+)$/.exec(location ?? '')![1]!;

/** 250,000 rows of one column: 500,000 cells (over a third of the 1,400,000 cells once held in all), 5.5 MiB held as counted packed. */
const BIG = Buffer.from(`title\n${Array.from({ length: 250_000 }, (_, i) => `Work ${i}`).join('\n')}\n`);
const SMALL = Buffer.from('title\nBlue Hour\n');

describe('held imports between galleries', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let attacker: Tenant;
  let quiet: Tenant;
  let victim: ConsoleSession;
  let floods: ConsoleSession[];

  beforeAll(async () => {
    t = await startApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    attacker = await tenant(t, { name: 'Galerie Flut' });
    quiet = await tenant(t, { name: 'Galerie Ruhig' });
    floods = [await signedIn(t, base, attacker.entityId, 'editor'), await signedIn(t, base, attacker.entityId, 'editor')];
    victim = await signedIn(t, base, quiet.entityId, 'editor');
  }, 120_000);
  afterAll(async () => t.close());

  test('one gallery\'s many large uploads past the held budget let go of its own oldest, never another gallery\'s upload', async () => {
    const held = t.app.heldImports;
    const budget = held.budgetBytes;
    try {
      const mine = await upload(victim, 'mine.csv', BIG);
      expect(mine.status).toBe(303);
      // Room for about two and a half such tables: the victim's and the attacker's two cannot all stay.
      held.budgetBytes = 12 * 1024 * 1024;
      const theirs: string[] = [];
      for (let i = 0; i < 4; i++) {
        const answer = await upload(floods[i % 2]!, `flood-${i}.csv`, BIG);
        expect(answer.status).toBe(303);
        theirs.push(uploadId(answer.location));
      }
      const page = await victim.get(`/console/import/${uploadId(mine.location)}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('250,000 rows of artworks');
      // The attacker's newest is held; its one before went to make room.
      expect((await floods[1]!.get(`/console/import/${theirs[3]}`)).status).toBe(200);
      expect((await floods[0]!.get(`/console/import/${theirs[2]}`)).status).toBe(404);
    } finally {
      held.budgetBytes = budget;
    }
  });

  test('a gallery reading with both of the process\'s turns waits behind another gallery\'s upload for the next turn', async () => {
    const held = t.app.heldImports;
    // The attacker's gallery reads two files: both turns.
    const turns = [(await held.readTurn(attacker.entityId))!, (await held.readTurn(attacker.entityId))!];
    const readTurn = held.readTurn.bind(held);
    const granted: number[] = [];
    held.readTurn = async (entityId, ...rest) => {
      const end = await readTurn(entityId, ...rest);
      granted.push(entityId);
      return end;
    };
    try {
      const flood = upload(floods[0]!, 'third.csv', SMALL);
      await vi.waitFor(() => expect(held.waitingReads()).toBe(1));
      const mine = upload(victim, 'mine.csv', SMALL);
      await vi.waitFor(() => expect(held.waitingReads()).toBe(2));
      turns[0]!();
      // The turn goes to the victim's gallery, which reads nothing, though the attacker asked first.
      expect((await mine).status).toBe(303);
      turns[1]!();
      expect((await flood).status).toBe(303);
      expect(granted).toEqual([quiet.entityId, attacker.entityId]);
    } finally {
      // The instance's own property goes; its class's method answers again.
      delete (held as Partial<typeof held>).readTurn;
    }
  });
});
