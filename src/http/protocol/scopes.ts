import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { hasScope } from '../../domain/keys.js';

/**
 * A route that reads or writes one kind of record (a feed, a run, the trash of a kind) needs that kind's
 * scope: `artworks:write` to add, change, delete or run an artworks feed, `artworks:read` to read it;
 * else 403 naming the scope.
 */
export function requireKind(request: FastifyRequest, kind: 'artworks' | 'events', access: 'read' | 'write'): void {
  const scope = `${kind}:${access}` as const;
  if (!hasScope(request.auth.scopes, scope)) throw new ApiError('forbidden', `This key lacks the scope ${scope}.`);
}
