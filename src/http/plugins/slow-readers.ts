import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../domain/errors.js';
import { fairTurn } from '../runtime/fair-turns.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route can answer with a large body (a list page): it is refused while too much is unread. */
    largeAnswer?: boolean;
  }
  interface FastifyInstance {
    unsent: UnsentAnswers;
  }
}

/** What answers written but not yet taken by their clients hold, for /metrics. */
export interface UnsentAnswers {
  /** Bytes of answers the process holds because their clients have not read them yet. */
  bytes(): number;
  /** Whether `bytes()` is past the ceiling: then routes with large answers shed load. */
  full(): boolean;
  /**
   * Counts an answer about to be written in `bytes()` until it finishes, and closes its connection
   * once it makes no progress for the send timeout. Every answer of Fastify's is watched (its onSend);
   * an answer sent before the framework calls it too (src/http/early/).
   */
  watch(request: IncomingMessage, response: ServerResponse): void;
  /** Large reads refused (503) because `bytes()` was past the ceiling. */
  shed: number;
  /** Connections closed because their client took nothing for the send timeout. */
  dropped: number;
}

export interface SlowReaderLimits {
  /** A connection whose answer makes no progress for this long is closed (nginx's `send_timeout`). */
  sendTimeoutMs: number;
  /** Past this many bytes of unread answers, routes with large answers answer 503 instead. */
  unsentMaxBytes: number;
}

/** How long a client refused for the ceiling waits: about the time a stuck client takes to be dropped. */
const SHED_RETRY_AFTER_S = 5;

/**
 * A client that stops reading holds the memory of its answer (the part the system's socket buffers did
 * not take) for as long as its connection lives. Two bounds: the connection is closed once its answer
 * has made no progress for the send timeout — a write still moving bytes, however slowly, resets it —
 * and while the answers held exceed a ceiling, a route that can answer
 * with a large body sheds load with 503 `service_unavailable` and `Retry-After`, rather than growing.
 */
async function slowReadersPlugin(app: FastifyInstance, limits: SlowReaderLimits): Promise<void> {
  const answering = new Set<ServerResponse>();
  const unsent: UnsentAnswers = {
    bytes: () => {
      let bytes = 0;
      for (const response of answering) bytes += response.writableLength;
      return bytes;
    },
    full: () => unsent.bytes() > limits.unsentMaxBytes,
    watch: (request, response) => {
      const { socket } = request;
      // Requests injected in tests have no real socket.
      if (typeof socket?.setTimeout !== 'function' || answering.has(response)) return;
      // Node emits a socket's timeout only at the second check in a row that finds its queued write
      // unchanged (net.Socket's _onTimeout), so checking every half timeout drops a stuck client after
      // about the send timeout.
      socket.setTimeout(Math.ceil(limits.sendTimeoutMs / 2));
      socket.once('timeout', onTimeout);
      answering.add(response);
      const settle = () => {
        answering.delete(response);
        socket.off('timeout', onTimeout).off('close', settle);
      };
      // The socket's close too: an answer queued behind another on its connection (pipelined) has no
      // socket of its own yet, and Node 22 emits neither event on it when the connection closes.
      response.once('finish', settle).once('close', settle);
      socket.once('close', settle);
    },
    shed: 0,
    dropped: 0,
  };
  app.decorate('unsent', unsent);

  app.addHook('onSend', (request, reply, payload, done) => {
    unsent.watch(request.raw, reply.raw);
    done(null, payload);
  });

  // Node's server closes a connection whose socket times out; this only counts it.
  const onTimeout = () => { unsent.dropped += 1; };

  app.addHook('onRoute', (route) => {
    if (!route.config?.largeAnswer) return;
    const hooks = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [...hooks, shedWhenFull, takeTurn];
  });
  // Requests for large answers arriving together start their work in turns, within the shared budget.
  const takeTurn = async () => { await fairTurn(); };
  const shedWhenFull = (_request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    if (!unsent.full()) return done();
    unsent.shed += 1;
    done(new ApiError('service_unavailable', 'Too many answers are waiting for their clients to read them; try again shortly.', { retry_after: SHED_RETRY_AFTER_S }));
  };
}

export default fp(slowReadersPlugin, { name: 'slow-readers' });
