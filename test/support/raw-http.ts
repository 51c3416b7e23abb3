import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

/** A TCP connection to the server on which a test writes HTTP by hand and reads what comes back. */
export interface RawConnection {
  socket: Socket;
  /** Everything received so far, as text. */
  received(): string;
  /** Writes and resolves once the bytes are handed to the system (rejects if the server reset us). */
  write(data: string | Buffer): Promise<void>;
  /** Resolves once `pattern` matches (or accepts) what was received; rejects on timeout or if the connection ends first. */
  waitFor(pattern: RegExp | ((received: string) => boolean), timeoutMs?: number): Promise<string>;
  /** Settles when the connection has closed: how long after opening, and the socket error if it was reset. */
  closed: Promise<{ afterMs: number; error: string | null }>;
  destroy(): void;
  /**
   * Resolves once the server has read every byte sent so far (Linux: its socket's receive queue in
   * /proc/net/tcp is empty), so a test knows the server has seen a request it sent only in part.
   */
  readByServer(): Promise<void>;
}

/** The receive queue of the server's end of the local connection from `clientPort` to `serverPort`, or null. */
function serverReceiveQueue(serverPort: number, clientPort: number): number | null {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, remote, , queues] = line.trim().split(/\s+/);
    if (local?.endsWith(`:${hex(serverPort)}`) && remote?.endsWith(`:${hex(clientPort)}`)) return parseInt(queues!.split(':')[1]!, 16);
  }
  return null;
}

export async function openRaw(port: number, host = '127.0.0.1'): Promise<RawConnection> {
  const socket = connect(port, host);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const opened = Date.now();
  let text = '';
  let error: string | null = null;
  const listeners = new Set<() => void>();
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    for (const listener of listeners) listener();
  });
  socket.on('error', (e: NodeJS.ErrnoException) => { error = e.code ?? e.message; });
  const closed = new Promise<{ afterMs: number; error: string | null }>((resolve) => socket.once('close', () => {
    for (const listener of listeners) listener();
    resolve({ afterMs: Date.now() - opened, error });
  }));
  return {
    socket,
    received: () => text,
    write: (data) => new Promise((resolve, reject) => socket.write(data, (e) => (e ? reject(e) : resolve()))),
    waitFor: (pattern, timeoutMs = 5000) => new Promise((resolve, reject) => {
      const check = () => {
        if (typeof pattern === 'function' ? pattern(text) : pattern.test(text)) return finish(() => resolve(text));
        if (socket.destroyed) finish(() => reject(new Error(`connection closed (${error ?? 'no error'}) before ${String(pattern)}; received: ${text.slice(0, 500)}`)));
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`timed out waiting for ${String(pattern)}; received: ${text.slice(0, 500)}`))), timeoutMs);
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      check();
    }),
    closed,
    destroy: () => socket.destroy(),
    readByServer: async () => {
      // The bytes written have left this socket first; then the server's queue must drain.
      while (socket.writableLength > 0 || serverReceiveQueue(port, socket.localPort!) !== 0) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The complete HTTP/1.1 responses (with Content-Length) in `text`, in order. */
export function parseResponses(text: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return responses;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (rest.length < end + 4 + length) return responses;
    responses.push({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
}
