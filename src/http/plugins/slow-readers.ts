import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
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
   * Counts an answer in `bytes()` until it finishes, and closes its connection once it makes no
   * progress for the send timeout while it is on the socket: an answer queued behind an earlier one on
   * its connection (pipelined) counts from the start, its send timeout only from its turn. Called for
   * every answer, before it is written (Fastify's, at its onSend) or after (those sent before the
   * framework, src/http/early/): one already written whole to the system's socket buffers, or whose
   * connection is gone, holds nothing and is not watched.
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

/** The answers watched on one connection, and the one of them on its socket now, if any. */
interface Connection {
  answers: Map<ServerResponse, () => void>;
  current: ServerResponse | undefined;
}

/** How long a client refused for the ceiling waits: about the time a stuck client takes to be dropped. */
const SHED_RETRY_AFTER_S = 5;

/**
 * A client that stops reading holds the memory of its answer (the part the system's socket buffers did
 * not take) for as long as its connection lives. Two bounds: the connection is closed once its answer
 * has made no progress for the send timeout with bytes of it waiting on the socket — a write still
 * moving bytes, however slowly, resets it, and the server's own slowness does not count — and while the
 * answers held exceed a ceiling, a route that can answer with a large body sheds load with 503
 * `service_unavailable` and `Retry-After`, rather than growing.
 */
async function slowReadersPlugin(app: FastifyInstance, limits: SlowReaderLimits): Promise<void> {
  const answering = new Set<ServerResponse>();
  /**
   * Per connection: the answers watched on it, each with what stops watching it, and which of them is
   * the connection's current answer (the one on its socket). One 'close' listener per connection
   * however many answers it pipelines: a listener per answer passed Node's MaxListeners.
   */
  const connections = new WeakMap<Socket, Connection>();
  // An answer queued behind another on its connection (pipelined) has no socket of its own yet, and
  // Node 22 emits neither finish nor close on it when the connection closes: settled here.
  function onClose(this: Socket) {
    for (const settle of connections.get(this)?.answers.values() ?? []) settle();
  }
  // Node emits a socket's timeout only at the second check in a row that finds its queued write
  // unchanged (net.Socket's _onTimeout), so checking every half timeout drops a stuck client after
  // about the send timeout.
  const checkEveryMs = Math.ceil(limits.sendTimeoutMs / 2);
  /**
   * Node's server emits a socket's timeout on the connection's current answer and closes the
   * connection only if nobody listens: listening on the watched current answer, this decides. Bytes
   * queued on the socket and unmoved for the check: the client takes nothing, it is dropped and counted.
   * Nothing queued: the server has not written the rest of the answer yet (a streamed page's next
   * slice), which is no fault of the client's; the next write starts the timer again.
   */
  function onStall(this: ServerResponse, socket: Socket) {
    if (socket.destroyed || this.writableLength === 0) return;
    unsent.dropped += 1;
    socket.destroy();
  }
  /**
   * The send timeout runs only while the connection's current answer is watched: it is on the socket,
   * with bytes to send (docs/performance.md, Pipelined requests behind a watched answer). An answer
   * queued behind another (pipelined) waits for the server, not for the client.
   */
  const sending = (socket: Socket, connection: Connection, response: ServerResponse) => {
    connection.current = response;
    response.on('timeout', onStall);
    // Set again for each answer: Node's server sets its own timeouts on a connection between the
    // requests it pipelines (keep-alive).
    socket.setTimeout(checkEveryMs);
  };
  const unsent: UnsentAnswers = {
    bytes: () => {
      let bytes = 0;
      for (const response of answering) bytes += response.writableLength;
      return bytes;
    },
    full: () => unsent.bytes() > limits.unsentMaxBytes,
    watch: (request, response) => {
      const socket = request.socket as Socket | undefined;
      // Requests injected in tests have no real socket.
      if (typeof socket?.setTimeout !== 'function' || socket.destroyed || answering.has(response)) return;
      // Written whole to the system's socket buffers already (`end()` returned with nothing queued).
      if (response.writableEnded && response.writableLength === 0) return;
      let connection = connections.get(socket);
      if (connection === undefined) {
        connections.set(socket, (connection = { answers: new Map(), current: undefined }));
        socket.once('close', onClose);
      }
      const watched = connection;
      // Queued behind an earlier answer on its connection (Node's pipelining queue: no socket yet). Its
      // bytes count against the ceiling from now on; its send timeout starts when Node hands it the
      // socket, after the answers before it have been sent.
      const onSocket = () => sending(socket, watched, response);
      const settle = () => {
        answering.delete(response);
        response.off('finish', settle).off('close', settle).off('socket', onSocket).off('timeout', onStall);
        watched.answers.delete(response);
        if (watched.current === response) watched.current = undefined;
        if (watched.answers.size === 0) {
          connections.delete(socket);
          socket.off('close', onClose);
        }
        if (watched.current !== undefined) return;
        // With no watched answer on the socket, the send timeout is taken off the connection, as Node's
        // server resets its own (to server.timeout). Left on, it closed a connection whose client had
        // pipelined more requests as soon as the server took longer than it to answer the next one,
        // with nothing unsent and uncounted (docs/performance.md, Pipelined requests behind a watched
        // answer). A keep-alive timeout Node's server set meanwhile (its 'finish' listener runs first,
        // and hands the socket to the next answer in line) stays.
        if (socket.timeout === checkEveryMs) socket.setTimeout(app.server.timeout);
      };
      watched.answers.set(response, settle);
      answering.add(response);
      response.once('finish', settle).once('close', settle);
      if (response.socket === socket) sending(socket, watched, response);
      else response.once('socket', onSocket);
    },
    shed: 0,
    dropped: 0,
  };
  app.decorate('unsent', unsent);

  app.addHook('onSend', (request, reply, payload, done) => {
    unsent.watch(request.raw, reply.raw);
    done(null, payload);
  });

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
