import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/**
 * The match rule of POST /v1/artworks (docs/api.md, Artworks), pinned for each statement that holds
 * it (src/store/artworks.ts, `matchRule`): a single POST's insert and the matches it answers (as a new
 * work's statement, and as a re-post's), and a batch's inserts (all its items in one statement, or each)
 * and its items' matches. Every case runs through each, on a catalog of its own, and must find the same
 * artwork.
 */

let t: TestApp;
beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' }); });
afterAll(async () => { await t.close(); });

const print = { title: 'Untitled', artist_name: 'Kiki Smith', creation_year: 2004, medium: 'Etching' };
const other = { ...print, title: 'Another Print' };

interface Case {
  name: string;
  /** The catalog, posted in this order. */
  catalog: object[];
  post: object;
  /** The catalog's work the POST updates, 'new' or 'ambiguous'. */
  finds: number | 'new' | 'ambiguous';
}

const cases: Case[] = [
  { name: 'the work with its external_id', catalog: [{ ...print, external_id: 'A' }], post: { ...print, external_id: 'A' }, finds: 0 },
  { name: 'the work with its external_id before an unnumbered one with its fingerprint', catalog: [print, { ...other, external_id: 'A' }], post: { ...print, external_id: 'A' }, finds: 1 },
  { name: 'an unnumbered work with its fingerprint, adopted', catalog: [{ ...other, external_id: 'A' }, print], post: { ...print, external_id: 'B' }, finds: 1 },
  { name: 'a new work when only numbered works have its fingerprint', catalog: [{ ...print, external_id: 'A' }], post: { ...print, external_id: 'B' }, finds: 'new' },
  { name: 'without external_id, the only work with its fingerprint, numbered or not', catalog: [other, { ...print, external_id: 'A' }], post: print, finds: 1 },
  { name: 'without external_id, ambiguous among two with its fingerprint', catalog: [{ ...print, external_id: 'A' }, { ...print, external_id: 'B' }], post: print, finds: 'ambiguous' },
  { name: 'a new work when no work has its keys', catalog: [{ ...other, external_id: 'A' }], post: { ...print, external_id: 'B' }, finds: 'new' },
];

/** How a POST ended, as the API shows it: the artwork it wrote and whether it created it, or the error. */
interface Outcome { id?: number; created?: boolean; error?: string }

const uses: Array<{ name: string; post: (api: ReturnType<typeof client>, body: object) => Promise<Outcome> }> = [
  {
    name: 'a POST',
    post: async (api, body) => {
      const r = await api.post('/v1/artworks', { ...body, price: 7 });
      return r.status === 201 ? { id: r.body.id, created: r.body.created } : { error: r.body.error };
    },
  },
  {
    // The entity's last POST a re-post: on PostgreSQL, tried first as a re-post that changes nothing.
    name: 'a POST after a re-post',
    post: async (api, body) => {
      for (const created of [true, false]) expect((await api.post('/v1/artworks', { title: 'Unrelated Study' })).body.created).toBe(created);
      const r = await api.post('/v1/artworks', { ...body, price: 7 });
      return r.status === 201 ? { id: r.body.id, created: r.body.created } : { error: r.body.error };
    },
  },
  {
    name: 'a batch',
    post: async (api, body) => {
      const r = await api.post('/v1/artworks/batch', { items: [{ ...body, price: 7 }, { title: 'Unrelated Study', price: 1 }] });
      expect(r.status).toBe(200);
      const [result] = r.body.results;
      return result.status === 201 ? { id: result.id, created: result.created } : { error: result.error };
    },
  },
];

describe('the match rule of POST /v1/artworks, for a single POST and a batch alike', () => {
  for (const use of uses) {
    for (const c of cases) {
      test(`${use.name} finds ${c.name}`, async () => {
        const api = client(t, (await tenant(t)).key);
        const ids: number[] = [];
        for (const work of c.catalog) {
          const r = await api.post('/v1/artworks', work);
          expect(r.status).toBe(201);
          ids.push(r.body.id);
        }
        const outcome = await use.post(api, c.post);
        if (c.finds === 'ambiguous') {
          expect(outcome).toEqual({ error: 'ambiguous' });
          return;
        }
        if (c.finds === 'new') {
          expect(outcome.created).toBe(true);
          expect(ids).not.toContain(outcome.id);
        } else {
          expect(outcome).toEqual({ id: ids[c.finds], created: false });
          expect((await api.get(`/v1/artworks/${ids[c.finds]}`)).body.price).toBe(7);
        }
      });
    }
  }
});
