// The message context one dispatch hands the OpenClaw host (`reply.finalizeInboundContext`): a group
// turn, or a direct (one-to-one) turn with the peer. Pure; host-calls.ts runs it. Field names and
// meanings are the host's MsgContext (src/plugin.ts proves the fit against the real .d.ts).
import type { GenerateRequest } from "../types.ts";

/** Fields every turn carries. */
type OpenClawTurnContext = {
  Body: string;
  BodyForAgent: string;
  From: string;
  To: string;
  SessionKey: string;
  AccountId: string;
  MessageSid: string;
  ConversationLabel: string;
  // Our situation block (the host appends it to its system prompt for direct chats too).
  GroupSystemPrompt: string;
  SenderId: string;
  SenderName: string;
  SenderIsSelf: boolean;
  Timestamp: number;
  Provider: string;
  Surface: string;
  WasMentioned: boolean;
  CommandAuthorized: boolean;
  OriginatingChannel: string;
  OriginatingTo: string;
};

/** A group turn. */
export type OpenClawGroupContext = OpenClawTurnContext & {
  ChatType: "group";
  GroupSubject: string;
  // Our own gate already decided this batch deserves a turn; the host must not re-gate it.
  GroupRequireMention: boolean;
};

/** A direct turn: the peer is the sender and the conversation; the owner's turns are the owner's. */
export type OpenClawDirectContext = OpenClawTurnContext & {
  ChatType: "direct";
  /** The peer's last line as typed, for the host's slash commands (honoured only when CommandAuthorized). */
  CommandBody: string;
  /** The identity's owner (configuration-derived, trusted): the host's command owner for this turn. */
  OwnerAllowFrom: string[];
};

/** The inbound context we hand to `reply.finalizeInboundContext` (a subset of the host's MsgContext). */
export type OpenClawInboundContext = OpenClawGroupContext | OpenClawDirectContext;

/** The host's route peer for a dispatch: the group, or the peer's aid in a direct conversation. */
export function routePeerOf(request: GenerateRequest): { kind: "group" | "direct"; id: string } {
  return request.conversation?.kind === "direct" ? { kind: "direct", id: request.conversation.peer } : { kind: "group", id: request.groupId };
}

/** Pure: the host inbound context for one dispatch. Sender and ids are those of the newest message. */
export function buildOpenClawInboundContext(params: {
  request: GenerateRequest;
  channelId: string;
  accountId: string;
  sessionKey: string;
  subject: string | undefined;
  /** The identity's owner: their direct turns are authorised as the owner's. */
  owner?: string | undefined;
}): OpenClawInboundContext {
  const { request, channelId } = params;
  const last = request.messages.at(-1);
  if (!last) throw new TypeError(`Expected \`request.messages\` to be non-empty, got 0 messages (dispatch ${request.dispatchId})`);
  const turn = {
    Body: request.body,
    BodyForAgent: request.body,
    From: `${channelId}:${last.sender}`,
    SessionKey: params.sessionKey,
    AccountId: params.accountId,
    MessageSid: last.msgId,
    GroupSystemPrompt: request.systemPrompt,
    SenderId: last.sender,
    SenderName: last.sender,
    SenderIsSelf: false,
    Timestamp: last.timestamp,
    Provider: channelId,
    Surface: channelId,
    OriginatingChannel: channelId,
  };
  if (request.conversation?.kind === "direct") {
    const peer = request.conversation.peer;
    const isOwner = params.owner !== undefined && params.owner.toLowerCase() === peer.toLowerCase();
    // Replies (and `openclaw message send --target acp-group:<aid>`) go to the peer.
    const to = `${channelId}:${peer}`;
    return {
      ...turn,
      From: `${channelId}:${peer}`,
      SenderId: peer,
      SenderName: peer,
      To: to,
      ChatType: "direct",
      ConversationLabel: peer,
      // One to one, every line is addressed to the agent.
      WasMentioned: true,
      CommandBody: last.content,
      // Only the owner may run the host's commands; anyone else admitted talks to the agent only.
      CommandAuthorized: isOwner,
      OwnerAllowFrom: params.owner ? [params.owner] : [],
      OriginatingTo: to,
    };
  }
  const to = `${channelId}:group:${request.groupId}`;
  const label = params.subject ?? request.groupId;
  return {
    ...turn,
    To: to,
    ChatType: "group",
    ConversationLabel: label,
    GroupSubject: label,
    WasMentioned: request.mentionInfo.mentioned,
    GroupRequireMention: false,
    // Group members are other agents and people, never operators: no slash commands from the group.
    CommandAuthorized: false,
    OriginatingTo: to,
  };
}
