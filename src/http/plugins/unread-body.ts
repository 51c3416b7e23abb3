import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** How much of a refused body is read and dropped before the answer goes out, at most. */
const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
const DRAIN_MAX_MS = 5000;

/**
 * An answer sent before the request's body has arrived (413 on Content-Length, 401, 415, …) waits until
 * the rest of the body has been read and dropped. Otherwise the connection is closed while the client
 * is still sending: its next bytes meet a closed socket, the system answers them with a reset, and the
 * reset destroys the answer the client has not read yet — it sees "connection reset", never the 413.
 * The drain is bounded (bytes and time); past the bound the connection is closed after the answer.
 */
async function unreadBodyPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onSend', (request, reply, payload, done) => {
    // `complete` is false only on a real connection whose body is still arriving (inject has none).
    if (request.raw.complete !== false || request.raw.destroyed) return done(null, payload);
    void drain(request.raw).then((drained) => {
      if (!drained) reply.header('connection', 'close');
      done(null, payload);
    });
  });
}

/** Reads and drops the rest of a request body; resolves true once it has ended, false at the bound. */
function drain(raw: IncomingMessage): Promise<boolean> {
  return new Promise((resolve) => {
    let bytes = 0;
    const finish = (drained: boolean) => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onClose);
      resolve(drained);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > DRAIN_MAX_BYTES) finish(false);
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(raw.complete);
    const timer = setTimeout(() => finish(false), DRAIN_MAX_MS);
    raw.on('data', onData).once('end', onEnd).once('close', onClose).once('error', onClose);
    raw.resume();
  });
}

export default fp(unreadBodyPlugin, { name: 'unread-body' });
