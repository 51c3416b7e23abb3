import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';

export interface KeptLimits {
  /** Idle connections kept per origin (webhooks: an endpoint's requests in flight at most). */
  perOrigin: number;
  /** An idle connection is closed after this long unused. */
  idleMs: number;
  /** Origins with connections kept; past it, the least recently used origin's are closed. */
  origins: number;
}

/**
 * Connections kept open between requests to one origin, for the one outgoing fetcher (fetch.ts,
 * `connections`): a webhook receiver is sent a message after another, and a connection per message
 * cost a connect, a socket and a close each (docs/performance.md, Webhooks).
 *
 * Every connection is opened by a fetch, under this pool's policy (`allowAddress`, which a fetch with
 * a pool uses as its own): the address checked is the address connected to, as for any fetch, and a
 * kept connection is only reused for a request to its own origin (scheme, host and port). A name that
 * resolves elsewhere later (DNS rebinding) reaches the new address only through a new connection,
 * which the policy checks. Bounded: `perOrigin` idle connections per origin, each closed after
 * `idleMs` unused, and at most `origins` origins, the least recently used retired first; connections in
 * use are the fetches in flight.
 */
export class KeptConnections {
  private readonly pools = new Map<string, http.Agent>();

  constructor(readonly allowAddress: (address: string) => boolean, private readonly limits: KeptLimits) {}

  /** The pool of `url`'s origin (made on first use). */
  agentFor(url: URL): http.Agent {
    const origin = url.origin;
    let agent = this.pools.get(origin);
    // Moved to the end: the map's order is the order of last use.
    if (agent) this.pools.delete(origin);
    else agent = this.open(url.protocol === 'https:');
    this.pools.set(origin, agent);
    if (this.pools.size > this.limits.origins) {
      const [oldest, pool] = this.pools.entries().next().value!;
      this.pools.delete(oldest);
      retire(pool);
    }
    return agent;
  }

  /** Closes every kept connection; requests in flight finish, their connections closed after them. */
  close(): void {
    for (const pool of this.pools.values()) retire(pool);
    this.pools.clear();
  }

  private open(secure: boolean): http.Agent {
    const options = {
      keepAlive: true, maxFreeSockets: this.limits.perOrigin, timeout: this.limits.idleMs,
      // The connection used last is reused first, so the others go idle and close.
      scheduling: 'lifo' as const,
    };
    return secure ? new https.Agent(options) : new http.Agent(options);
  }
}

/** A pool no longer used: its idle connections close now, those in use when their request ends. */
function retire(agent: http.Agent): void {
  agent.keepSocketAlive = (socket: Duplex) => { socket.destroy(); };
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
}
