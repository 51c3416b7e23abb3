import { Writable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startApp } from '../helpers.js';

/** The client address the server logged for a request from `peer` that claims `forwarded`. */
async function loggedClient(env: Record<string, string>, peer: string, forwarded: string): Promise<string> {
  const lines: string[] = [];
  const stream = new Writable({ write(chunk, _encoding, done) { lines.push(chunk.toString()); done(); } });
  const t = await startApp({ LOG_LEVEL: 'info', ...env }, undefined, { logStream: stream });
  try {
    await t.app.inject({ method: 'GET', url: '/healthz', remoteAddress: peer, headers: { 'x-forwarded-for': forwarded } });
    const answered = lines.map((l) => JSON.parse(l) as { msg?: string; client?: string }).find((l) => l.msg === 'request completed');
    return answered!.client!;
  } finally {
    await t.close();
  }
}

describe('TRUST_PROXY', () => {
  test('unset, X-Forwarded-For is ignored: the client is the peer', async () => {
    expect(await loggedClient({}, '198.51.100.9', '203.0.113.7')).toBe('198.51.100.9');
  });

  test('naming the proxy, the client is the address the proxy forwarded; another peer cannot claim one', async () => {
    expect(await loggedClient({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }, '10.1.2.3', '203.0.113.7')).toBe('203.0.113.7');
    expect(await loggedClient({ TRUST_PROXY: '10.0.0.0/8' }, '198.51.100.9', '203.0.113.7')).toBe('198.51.100.9');
  });

  test('true trusts every hop', async () => {
    expect(await loggedClient({ TRUST_PROXY: 'true' }, '198.51.100.9', '203.0.113.7')).toBe('203.0.113.7');
  });

  test.each(['yes', '2', '10.0.0.0/33', 'proxy.example', '10.0.0.1,'])('TRUST_PROXY=%s is refused at start-up with a message naming it', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/TRUST_PROXY must be/);
  });

  test('false and empty mean no proxy', () => {
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '' }).trustProxy).toBe(false);
  });
});
