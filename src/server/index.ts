// The local group server's public surface.
export {
  GroupServerError,
  startGroupServer,
  type GroupDefinition,
  type GroupMember,
  type GroupServer,
  type GroupServerCounters,
  type GroupServerOptions,
} from "./group-server.ts";
export { createFileHistoryStore, createMemoryHistoryStore, type GroupHistoryStore } from "./history-store.ts";
export type { RateLimit } from "./rate-limit.ts";
