import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '../../domain/errors.js';

/** How long a connection refused by the HTTP parser keeps reading (and dropping) what its client sends. */
const LINGER_MS = 2000;

const handled = new WeakSet<Socket>();

/** What a request that never reached the router gets, by Node's reason for refusing it. */
function errorFor(code: string | undefined): ApiError {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError('request_timeout', 'The request did not arrive in time; the connection is closed.');
  if (code === 'HPE_HEADER_OVERFLOW') return new ApiError('headers_too_large');
  return new ApiError('bad_request', 'The request is not valid HTTP/1.1.');
}

/**
 * Node's HTTP parser refused a request (malformed, headers over the limit, too slow): the answer is the
 * contract's error shape, not an empty reset. The connection is then half-closed and kept reading for a
 * moment, so a client still sending (large headers) reads the answer instead of a reset.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (handled.has(socket) || error.code === 'ECONNRESET' || socket.destroyed) return;
  handled.add(socket);
  if (socket.writable) {
    const apiError = errorFor(error.code);
    const body = JSON.stringify(apiError.toBody());
    socket.end(`HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\nContent-Type: application/json; charset=utf-8\r\n`
      + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // The client's end of the conversation (or an error) ends the linger early.
  socket.once('end', () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.resume();
}
