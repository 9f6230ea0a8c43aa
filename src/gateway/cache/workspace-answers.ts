/**
 * A deleted workspace's cached answers go with it, rather than stay until they expire (up to a hundred
 * years under a large `max_age`): the simple cache's (this node's memory, or Redis, which every node shares)
 * and the semantic cache's (rows of the store, and every node's index, told over the invalidation channel).
 * Called by the node that deleted the workspace, once the deletion is committed: no key can reach them by
 * then. Nodes without Redis keep their own memory's entries until the cache's bound pushes them out.
 */
import type { GatewayDeps } from '../deps.js';

export async function removeWorkspaceAnswers(deps: GatewayDeps, workspaceId: string): Promise<void> {
  const { routing, logger } = deps;
  const [simple, semantic] = await Promise.allSettled([
    routing.cache.removeWorkspace(workspaceId),
    routing.semantic.cache.removeWorkspace(workspaceId),
  ]);
  // The deletion stands either way: the store's semantic entries are expired by it (swept within a
  // minute), the simple cache's expire with their max_age.
  if (simple.status === 'rejected') {
    logger.warn({ err: simple.reason, workspace: workspaceId }, "a deleted workspace's cached answers stay");
  }
  if (semantic.status === 'rejected') {
    logger.warn(
      { err: semantic.reason, workspace: workspaceId },
      "a deleted workspace's semantic cache entries stay until swept",
    );
  }
}
