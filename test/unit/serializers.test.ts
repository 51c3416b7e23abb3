import { describe, expect, test } from 'vitest';
import { cachedSerializers } from '../../src/http/protocol/serializers.js';

/** src/http/protocol/serializers.ts: Fastify's response serializers, compiled once per process. */
describe('response serializers', () => {
  const shared = () => ({ 'urn:money': { $id: 'urn:money', type: 'object', properties: { amount: { type: 'number' } } } });
  const route = (schema: unknown) => ({ method: 'GET', url: '/x', httpStatus: '200', schema });
  const item = () => ({ type: 'object', properties: { title: { type: 'string' }, price: { $ref: 'urn:money#' } } });

  test('a second app with the same schemas (cloned, as Fastify clones them) gets the serializer the first compiled', () => {
    const first = cachedSerializers(shared(), {})(route(item()));
    const second = cachedSerializers(shared(), {})(route(item()));
    expect(second).toBe(first);
    expect(second({ title: 'Dusk', price: { amount: 1200, extra: true }, secret: 'x' })).toBe('{"title":"Dusk","price":{"amount":1200}}');
  });

  test('another schema, other shared schemas or other options make another serializer', () => {
    const base = cachedSerializers(shared(), {})(route(item()));
    const otherSchema = cachedSerializers(shared(), {})(route({ type: 'object', properties: { title: { type: 'string' }, year: { type: 'integer' } } }));
    expect(otherSchema).not.toBe(base);
    expect(otherSchema({ title: 'Dusk', year: 2001 })).toBe('{"title":"Dusk","year":2001}');
    const otherShared = { 'urn:money': { $id: 'urn:money', type: 'object', properties: { currency: { type: 'string' } } } };
    const withOtherShared = cachedSerializers(otherShared, {})(route(item()));
    expect(withOtherShared).not.toBe(base);
    expect(withOtherShared({ title: 'Dusk', price: { amount: 1, currency: 'EUR' } })).toBe('{"title":"Dusk","price":{"currency":"EUR"}}');
    expect(cachedSerializers(shared(), { rounding: 'floor' })(route(item()))).not.toBe(base);
  });
});
