import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import csrfProtection from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import { ApiError } from '../domain/errors.js';
import { html } from '../web/html.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { consoleCookies, guardRoute, Refused } from './guard.js';
import { heading, render } from './layout.js';
import { changelogPage } from './pages/changelog.js';
import { keyPages } from './pages/keys.js';
import { webhookPages } from './pages/webhooks.js';
import { listPages } from './pages/lists.js';
import { peoplePages } from './pages/people.js';
import { profilePages } from './pages/profile.js';
import { UPLOAD_MAX_BYTES } from '../import/limits.js';
import { feedPages } from './pages/feeds.js';
import { importPage } from './pages/import.js';
import { HeldImports } from './held-imports.js';
import { overviewPage } from './pages/overview.js';
import { artworkRecordPages, eventRecordPages } from './pages/records.js';
import { sessionPages } from './pages/session.js';
import { trashPages } from './pages/trash.js';
import { runPages } from './pages/runs.js';

declare module 'fastify' {
  interface FastifyInstance {
    heldImports: HeldImports;
  }
}

/** Every page module of the console (src/console/README.md). */
const PAGES: FastifyPluginAsync[] = [
  sessionPages, overviewPage, listPages, artworkRecordPages, eventRecordPages, importPage, feedPages, changelogPage, runPages, trashPages, profilePages, keyPages, webhookPages, peoplePages,
];


/**
 * The gallery console at /console (docs/console.md), encapsulated: its cookie, form, upload and CSRF
 * plugins, its guard and its HTML error pages touch no other route of the app.
 */
export async function consolePlugin(app: FastifyInstance): Promise<void> {
  const cookies = consoleCookies(app.config.publicBaseUrl);
  app.decorateRequest('user', null as unknown as FastifyRequest['user']);
  // Import and Feeds read files through the same held steps (columns, preview); the app may hold them
  // for the API's feed preview too, which counts against the same slots.
  if (!app.hasDecorator('heldImports')) app.decorate('heldImports', new HeldImports());
  await app.register(cookie);
  await app.register(formbody);
  await app.register(multipart, { limits: { fileSize: UPLOAD_MAX_BYTES, files: 1, fields: 100, parts: 101 } });
  await app.register(csrfProtection, {
    cookieKey: cookies.csrf,
    cookieOpts: { path: cookies.csrfPath, httpOnly: true, sameSite: 'lax', secure: cookies.secure },
    // Forms send the token as a field; an upload form (multipart, read by its handler) in its action's query.
    getToken: (request: FastifyRequest) => {
      const body = request.body as Record<string, unknown> | undefined;
      const field = body?._csrf;
      const query = (request.query as Record<string, unknown> | undefined)?._csrf;
      return typeof field === 'string' ? field : typeof query === 'string' ? query : (request.headers['x-csrf-token'] as string | undefined) ?? '';
    },
  });
  const publicOrigin = new URL(app.config.publicBaseUrl).origin;
  // Browsers name a form's origin only when the referrer policy lets them (no-referrer sends
  // "Origin: null"): same-origin keeps URLs (invite tokens included) from every other site.
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('referrer-policy', 'same-origin');
  });
  app.addHook('onRoute', (route) => guardRoute(route, app.csrfProtection.bind(app), publicOrigin, cookies));

  app.setErrorHandler((error: FastifyError, request, reply) => errorPage(request, reply, error));
  app.setNotFoundHandler((request, reply) => render(request, reply, {
    title: 'Not found', status: 404, body: html`${heading('Not found')}<p>There is no such page in the console.</p><p><a href="/console">Back to the overview</a></p>`,
  }));

  app.get('/assets/console.css', { config: { role: 'anyone' }, schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CONSOLE_CSS));
  app.get('/assets/console.js', { config: { role: 'anyone' }, schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CONSOLE_JS));

  for (const page of PAGES) await app.register(page);
}

/** Failures as pages: 403 (role, CSRF), 404 (another entity's record), 400/409 not handled by a form, 5xx without detail. */
function errorPage(request: FastifyRequest, reply: FastifyReply, error: FastifyError): FastifyReply {
  const csrf = error.code === 'FST_CSRF_MISSING_SECRET' || error.code === 'FST_CSRF_INVALID_TOKEN';
  const status = error instanceof ApiError ? error.status : error instanceof Refused || csrf ? 403 : (error.statusCode ?? 500);
  if (status >= 500) request.log.error({ err: error }, 'console request failed');
  const message = csrf ? 'This form has expired or was not sent from the console. Go back, reload the page and try again.'
    : status >= 500 ? 'Something went wrong on our side. Try again in a moment.'
      : error.message;
  const title = status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : status >= 500 ? 'Something went wrong' : 'That did not work';
  if (error instanceof ApiError && error.extras.retry_after !== undefined) reply.header('retry-after', error.extras.retry_after);
  return render(request, reply, { title, status, body: html`${heading(title)}<p>${message}</p><p><a href="/console">Back to the overview</a></p>` });
}
