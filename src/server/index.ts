// The local group service's public surface (hosted by the local network's message service).
export {
  GroupServiceError,
  createGroupService,
  type GroupDefinition,
  type GroupMember,
  type GroupService,
  type GroupServiceCounters,
  type GroupServiceOptions,
} from "./group-service.ts";
export { createFileHistoryStore, createMemoryHistoryStore, type GroupHistoryStore } from "./history-store.ts";
export type { RateLimit } from "./rate-limit.ts";
export type { ServiceAgent, ServiceAgentHost } from "./service-agent.ts";
