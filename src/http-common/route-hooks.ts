import type { RouteOptions } from 'fastify';

type RouteHookName = 'onRequest' | 'preValidation' | 'preHandler' | 'onSend' | 'onResponse';

/**
 * Appends a hook to one route's own hooks, from an `onRoute` hook: the routes that need it run it with
 * what they need already bound, and the others pay nothing for it on each request.
 */
export function appendRouteHook(route: RouteOptions, name: RouteHookName, hook: unknown): void {
  const current = route[name] as unknown;
  const hooks: unknown[] = current === undefined ? [] : Array.isArray(current) ? current : [current];
  (route as unknown as Record<RouteHookName, unknown[]>)[name] = [...hooks, hook];
}

/** Puts a hook before one route's other hooks of that name (those that plugins registered earlier added). */
export function prependRouteHook(route: RouteOptions, name: RouteHookName, hook: unknown): void {
  const current = route[name] as unknown;
  const hooks: unknown[] = current === undefined ? [] : Array.isArray(current) ? current : [current];
  (route as unknown as Record<RouteHookName, unknown[]>)[name] = [hook, ...hooks];
}
