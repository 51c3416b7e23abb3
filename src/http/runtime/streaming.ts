import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import { fairTurn } from './fair-turns.js';

/** How much of an answer waits in the process for its reader, at most, before the next slice is made. */
const SLICE_BYTES = 64 * 1024;

/**
 * Sends an answer made of JSON text slices. A small answer (under SLICE_BYTES, most pages) goes out as
 * one string, with its Content-Length. A larger one is written as the client reads it: the next slice
 * is made only when the connection has taken the previous ones (backpressure), each in its own turn of
 * the event loop. So a large answer costs the process about one slice of memory per connection, never
 * the whole text, and other requests wait for at most one slice, never for the whole answer. All large
 * answers together share a time budget per turn (fair-turns.ts).
 */
export async function sendJsonSlices(reply: FastifyReply, slices: AsyncIterable<string>): Promise<FastifyReply> {
  reply.type('application/json; charset=utf-8');
  const iterator = slices[Symbol.asyncIterator]();
  let head = '';
  while (head.length < SLICE_BYTES) {
    await fairTurn();
    const next = await iterator.next();
    if (next.done) return reply.send(head);
    head += next.value;
  }
  return reply.send(Readable.from(oneATurn(head, iterator), { objectMode: false, highWaterMark: SLICE_BYTES }));
}

async function* oneATurn(head: string, rest: AsyncIterator<string>): AsyncGenerator<string> {
  yield head;
  for (;;) {
    await nextTurn();
    await fairTurn();
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}
