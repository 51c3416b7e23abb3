import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Role } from '../db/types.js';
import type { Actor } from '../store/changelog.js';
import { sessionUser, type SignedIn } from '../store/users.js';
import { sha256 } from '../domain/passwords.js';
import { appendRouteHook } from '../http-common/route-hooks.js';

/** Who may use a console route: a signed-in user of at least this role, or anyone (sign-in, invite, assets). */
export type Access = Role | 'anyone';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Console routes only: the least role the route needs (src/console/README.md). */
    role?: Access;
  }
  interface FastifyRequest {
    /** The signed-in console user (routes with a role). */
    user: SignedIn;
  }
}

/** The console's cookies: their names, the CSRF cookie's path, and whether they need HTTPS. */
export interface ConsoleCookies {
  secure: boolean;
  session: string;
  csrf: string;
  csrfPath: string;
}

/**
 * As PUBLIC_BASE_URL says (docs/deploy.md, Console cookies): on https, Secure and `__Host-` prefixed, so
 * that a sibling subdomain cannot plant a session cookie (a `__Host-` cookie has no Domain and Path=/,
 * and browsers refuse to set one otherwise); on http (a local setup), the plain names.
 */
export function consoleCookies(publicBaseUrl: string): ConsoleCookies {
  return publicBaseUrl.startsWith('https:')
    ? { secure: true, session: '__Host-console_session', csrf: '__Host-console_csrf', csrfPath: '/' }
    : { secure: false, session: 'console_session', csrf: 'console_csrf', csrfPath: '/console' };
}
const RANK: Record<Role, number> = { viewer: 0, editor: 1, owner: 2 };

export const mayAct = (user: SignedIn, role: Role): boolean => RANK[user.role] >= RANK[role];

/** A console write is recorded like an API write, with `console:<user id>` as its source (docs/console.md, Roles). */
export const actorOf = (request: FastifyRequest): Actor =>
  ({ entityId: request.user.entity.id, entitySlug: request.user.entity.slug, source: `console:${request.user.userId}` });

/** The refusal of a request beyond the user's role or without a valid CSRF token: 403, nothing changed. */
export class Refused extends Error {
  readonly statusCode = 403;
  constructor(message: string) {
    super(message);
  }
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
type Hook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

/**
 * The guard of one console route, bound at registration: the session (onRequest: no session → the
 * sign-in page), then for a form post the origin and the CSRF token (preHandler, once the form is
 * parsed; `csrfProtection` is @fastify/csrf-protection's hook), then the role.
 */
export function guardRoute(route: RouteOptions, csrfProtection: Hook, publicOrigin: string, cookies: ConsoleCookies): void {
  const role = route.config?.role;
  if (role === undefined) throw new Error(`console route ${String(route.method)} ${route.url} declares no role (config.role)`);
  // Pages, not API operations: left out of the OpenAPI document.
  route.schema = { ...route.schema, hide: true };
  const hooks: Hook[] = [];
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (methods.some((m) => UNSAFE.has(m))) {
    // A browser names the page a form was sent from; another site's page is refused before the token is read.
    hooks.push((request, _reply, done) => {
      const origin = request.headers.origin;
      const own = origin === undefined || origin === publicOrigin || origin === `${request.protocol}://${request.host}`;
      done(own ? undefined : new Refused('This form was sent from another site.'));
    }, csrfProtection);
  }
  if (role !== 'anyone') {
    appendRouteHook(route, 'onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const id = request.cookies[cookies.session];
      const user = id ? await sessionUser(request.server.db, sha256(id)) : undefined;
      if (user) {
        request.user = user;
        return;
      }
      if (id) reply.clearCookie(cookies.session, { path: '/', secure: cookies.secure });
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
      return reply.code(303).header('location', `/console/sign-in${next}`).header('cache-control', 'no-store').send();
    });
    hooks.push((request, _reply, done) => done(mayAct(request.user, role) ? undefined
      : new Refused(`This needs the ${role} role; you are ${request.user.role === 'owner' ? 'an' : 'a'} ${request.user.role}.`)));
  }
  const current = route.preHandler;
  route.preHandler = [...hooks, ...(current === undefined ? [] : Array.isArray(current) ? current : [current])] as RouteOptions['preHandler'];
}
