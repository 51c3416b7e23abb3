import { EventEmitter } from 'node:events';

/**
 * In-process notices of changes that caches must see at once: a key revoked, an entity paused or
 * edited. Other processes (the CLI, other servers) are covered by the caches' short TTL instead.
 */
export const invalidations = new EventEmitter<{ 'entity-changed': [entityId: number]; 'key-changed': [prefix: string] }>();
invalidations.setMaxListeners(0);
