import { afterAll, beforeAll, expect, test } from 'vitest';
import { ArtworkList, ArtworkListItem } from '../../src/schemas/artworks.js';
import { COMPONENTS } from '../../src/schemas/components.js';
import { strictAjv } from '../../src/schemas/validator.js';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/**
 * The artwork list's JSON is rendered by the database (json_object / json_agg), not by the route's
 * serializer: it must still be exactly the documented shape, with every value as stored.
 */

let t: TestApp;
beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' }); });
afterAll(async () => { await t.close(); });

const TRICKY = [
  'Plain',
  'Quotes "double" and \'single\', back\\slash, slash / and </script><b>',
  'Control \u0001\u0007\u001f, tab\t, newline\nand CR\r',
  'Unicode: 草間彌生 김환기 Ørsted Straße, combining e\u0301, emoji 🎨🖼️, U+2028 \u2028 U+2029 \u2029',
];

test('the list body is valid JSON of the documented shape, and each item equals the artwork as GET returns it', async () => {
  const { key } = await tenant(t);
  const api = client(t, key);
  const ids: number[] = [];
  for (const [i, title] of TRICKY.entries()) {
    const body = i === 0
      ? { title } // every optional field absent: nulls in the list
      : {
        title, artist_name: `${title} artist`, creation_year: -3000 + i, medium: title, dimensions: '10 × 20 cm',
        price: i === 1 ? Number.MAX_SAFE_INTEGER : 0, currency: 'eur', availability: 'reserved', image_url: 'https://img.example/a?b=1&c="2"',
      };
    const r = await api.post('/v1/artworks', body);
    expect(r.status).toBe(201);
    ids.push(r.body.id);
  }

  const response = await t.app.inject({ method: 'GET', url: '/v1/artworks?limit=10', headers: { authorization: `Bearer ${key}` } });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  const list = JSON.parse(response.body);
  // The list refers to its item by name: the validator learns every named model first.
  for (const model of COMPONENTS) if (!strictAjv.getSchema((model as { $id: string }).$id)) strictAjv.addSchema(model);
  const validate = strictAjv.compile(ArtworkList);
  expect(validate(list), JSON.stringify(validate.errors)).toBe(true);
  expect(list).toMatchObject({ total: TRICKY.length, page: 1, limit: 10 });
  expect(list.artworks.map((a: { id: number }) => a.id)).toEqual(ids);

  const listed = Object.keys(ArtworkListItem.properties);
  for (const item of list.artworks) {
    expect(Object.keys(item)).toEqual(listed);
    const full = (await api.get(`/v1/artworks/${item.id}`)).body;
    expect(item).toEqual(Object.fromEntries(listed.map((field) => [field, full[field]])));
  }
  expect(list.artworks[0].creation_year).toBeNull();
  expect(list.artworks[1].price).toBe(Number.MAX_SAFE_INTEGER);
  expect(list.artworks[2].title).toBe(TRICKY[2]!.trim());
  expect(list.artworks[3].title).toBe(TRICKY[3]!.trim());
});

test('an empty catalog and a page past the end answer an empty array, not null', async () => {
  const { key } = await tenant(t);
  for (const url of ['/v1/artworks', '/v1/artworks?page=99', '/v1/artworks?availability=sold']) {
    const response = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ artworks: [], total: 0, page: url.includes('99') ? 99 : 1, limit: 50, has_more: false, next_after: null });
    expect(response.headers.link).toBeUndefined();
  }
});
