import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { CliError } from './context.js';

const listeningText = (address: string) => `Art Catalog Service listening on ${address}`;

/**
 * A port another process holds (a second `npm start`, most often) said in one line with what to do
 * about it; any other failure to listen is left as it came.
 */
function listenFailure(error: unknown, host: string, port: number): unknown {
  if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') return error;
  return new CliError(`port ${port} on ${host} is already in use (another art-catalog serve?); stop that process, or choose another port: PORT=${port + 1} npm start`);
}

/** The one line `serve` warns with when outgoing fetches may reach private addresses, or null. */
export function privateAddressesWarning(config: { fetchAllowPrivate: boolean; imageFetchAllowPrivate: boolean }): string | null {
  if (config.fetchAllowPrivate) return 'FETCH_ALLOW_PRIVATE=true: feeds, webhooks and images may reach loopback and private addresses (tests and closed networks only)';
  if (config.imageFetchAllowPrivate) return 'IMAGE_FETCH_ALLOW_PRIVATE=true: images may be fetched from loopback and private addresses (tests and closed networks only)';
  return null;
}

/** `serve`: the app plus the process concerns — listening, signals, graceful close. */
export function registerServeCommand(program: Command): void {
  program.command('serve')
    .description('run the HTTP server (applies pending migrations first)')
    .action(async () => {
      const config = loadConfig();
      // Loaded here so admin commands do not pay for the HTTP stack at start-up.
      const [{ buildApp }, { logsAt }] = await Promise.all([import('../http/app.js'), import('../http/runtime/logging.js')]);
      const app = await buildApp({ config });

      let closing = false;
      const shutdown = (signal: string) => {
        if (closing) return;
        closing = true;
        const started = Date.now();
        app.log.info({ signal }, 'shutting down: finishing requests in flight');
        // A request that still hangs after the deadline is cut rather than keeping the process alive.
        const deadline = setTimeout(() => {
          app.log.error({ timeout_ms: config.shutdownTimeoutMs }, 'shutdown deadline passed; exiting with requests still open');
          process.exit(1);
        }, config.shutdownTimeoutMs);
        deadline.unref();
        // close(): no new connections, 503 on open ones, requests in flight answered with Connection: close,
        // then the pools; it resolves once every connection has ended.
        app.close().then(() => {
          app.log.info({ drain_ms: Date.now() - started }, 'stopped');
          process.exit(0);
        }, (error: unknown) => {
          app.log.error({ err: error }, 'error while closing');
          process.exit(1);
        });
      };
      // Before the address is printed: whoever reads it may signal at once, and a signal with no
      // handler yet would kill the process without a graceful close.
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      process.on('SIGINT', () => shutdown('SIGINT'));
      // Private addresses open to outgoing fetches is a test or closed-network setting: said at start,
      // at any LOG_LEVEL, so a production server never runs with it unnoticed (docs/operations.md).
      const open = privateAddressesWarning(config);
      if (open) (logsAt(app.log, 'warn') ? app.log : app.log.child({}, { level: 'warn' })).warn(open);
      const address = await app.listen({ port: config.port, host: config.host, listenTextResolver: listeningText })
        .catch(async (error: unknown) => {
          await app.close();
          throw listenFailure(error, config.host, config.port);
        });
      // Fastify logged that line at info. The operator, and whoever waits for the URL (PORT=0), needs
      // it at any LOG_LEVEL, so above info it is written by a child logger of its own level.
      if (!logsAt(app.log, 'info')) app.log.child({}, { level: 'info' }).info(listeningText(address));
    });
}
