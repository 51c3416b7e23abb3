import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real server (PostgreSQL, Redis) that a test can cut: `refuse` closes the
 * listening port and every connection (a server that is down), `blackhole` accepts connections and
 * drops what they send (a host that swallows packets), `forward` restores service on the same port.
 */
export interface TcpProxy {
  port: number;
  forward(): Promise<void>;
  refuse(): Promise<void>;
  blackhole(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let mode: 'forward' | 'blackhole' = 'forward';
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  };
  const onConnection = (client: Socket) => {
    track(client);
    if (mode === 'blackhole') return;
    const upstream = connect(targetPort, targetHost);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  };
  let server: Server | null = null;
  let port = 0;
  const listen = async () => {
    if (server) return;
    server = createServer(onConnection);
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  };
  const cut = async () => {
    for (const socket of sockets) socket.destroy();
    if (!server) return;
    const closing = server;
    server = null;
    await new Promise((resolve) => closing.close(resolve));
  };
  await listen();
  return {
    get port() { return port; },
    async forward() { mode = 'forward'; await listen(); },
    async refuse() { await cut(); },
    async blackhole() { await cut(); mode = 'blackhole'; await listen(); },
    close: cut,
  };
}
