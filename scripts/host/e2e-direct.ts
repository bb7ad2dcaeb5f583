// Direct messages in the real host (steps of scripts/host/e2e.ts, with its gateway running and no
// `dmPolicy` in the config, so the host's default applies):
//   4. the owner DMs the agent: the host's agent gets one direct turn (its Message Context says
//      chat_type "direct", our direct situation block names the owner as the peer), and the answer
//      comes back on the owner's session
//   5. a stranger DMs it: no model turn, the log says why (pairing-required), and the stranger gets
//      the host's pairing reply with a code; `openclaw pairing approve acp-group <code>` (the host's
//      own command, another process) approves it, and the stranger's next DM is answered
// Every DM here goes over the local network's real sockets, as the official SDK sends it.
import type { NetworkAgent } from "../../src/network/index.ts";
import type { DirectMessage } from "../../src/network/direct-link.ts";
import type { Gateway, HostPaths } from "./host-env.ts";
import { runOpenclaw } from "./host-env.ts";
import type { MockModel, ModelCall } from "./mock-model.ts";

/** The mock model's answers to the DMs below (chosen by a word of the message). */
export const DIRECT_ANSWERS = {
  /** A line containing "hear me". */
  owner: "Loud and clear, Alice: I hear you.",
  /** A line containing "approved". */
  stranger: "Hello Dave, welcome: what can I do for you?",
} as const;

export function directAnswer(lastUser: string): string | undefined {
  if (lastUser.includes("hear me")) return DIRECT_ANSWERS.owner;
  if (lastUser.includes("approved")) return DIRECT_ANSWERS.stranger;
  return undefined;
}

export interface DirectStepsContext {
  host: HostPaths;
  env: NodeJS.ProcessEnv;
  gateway: Gateway;
  model: MockModel;
  bot: string;
  /** The owner (in the config's `owner` and `humans`). */
  owner: NetworkAgent;
  /** Known to nobody: not in any list, not in any group. */
  stranger: NetworkAgent;
  check(name: string, ok: boolean, detail?: string): void;
  step(title: string): void;
  waitFor<T>(what: string, timeoutMs: number, probe: () => T | undefined): Promise<T>;
}

const REPLY_TIMEOUT_MS = 120_000;
const CHANNEL = "acp-group";

/** Our direct turns (our direct situation block names the peer) for `peer`. */
const directCalls = (calls: readonly ModelCall[], peer: string) => calls.filter((c) => c.system.includes(`peer=${peer}`));

/** Every direct message `agent` receives from `from`, in order. */
function inbox(agent: NetworkAgent, from: string): DirectMessage[] {
  const got: DirectMessage[] = [];
  agent.onDirect((m) => {
    if (m.peer.toLowerCase() === from.toLowerCase()) got.push(m);
  });
  return got;
}

export async function runDirectSteps(c: DirectStepsContext): Promise<void> {
  const ownerInbox = inbox(c.owner, c.bot);
  const strangerInbox = inbox(c.stranger, c.bot);

  c.step("4. the owner DMs the agent");
  let callsBefore = c.model.calls.length;
  const sent = await c.owner.sendDirect({ peer: c.bot, text: "Echo, can you hear me?" });
  const answer = await c.waitFor("the agent's answer in the owner's session", REPLY_TIMEOUT_MS, () => ownerInbox[0]);
  const ownerCalls = directCalls(c.model.calls.slice(callsBefore), c.owner.aid);
  check(c, "one direct model turn for the owner's line", ownerCalls.length === 1, `${ownerCalls.length} direct call(s), ${c.model.calls.length - callsBefore} in all`);
  const call = ownerCalls[0]!;
  check(c, "the host saw a direct chat (its Message Context says chat_type direct)", /"chat_type":\s*"direct"/.test(call.system), excerpt(call.system, "chat_type"));
  const ownerSession = `agent:main:${CHANNEL}:direct:${c.owner.aid}`;
  check(c, "…routed by the owner's aid: the host's DM session for that peer", c.gateway.log().includes(`sessionKey=${ownerSession}`), ownerSession);
  check(c, "…with the owner's line in the turn", call.lastUser.includes("Echo, can you hear me?"), excerpt(call.lastUser, "Echo, can you hear me?"));
  check(
    c,
    "the answer came back to the owner, on the session the owner opened",
    answer.text === DIRECT_ANSWERS.owner && answer.sessionId === sent.sessionId,
    `${JSON.stringify(answer.text)} on ${answer.sessionId} (opened ${sent.sessionId})`,
  );

  c.step("5. a stranger DMs the agent: the host's pairing");
  callsBefore = c.model.calls.length;
  const logOffset = c.gateway.log().length;
  await c.stranger.sendDirect({ peer: c.bot, text: "Hi, who are you?" });
  const refused = await c.gateway.waitForLog(/direct\.refused.*"reason":"pairing-required"/, REPLY_TIMEOUT_MS, logOffset);
  check(c, "the gateway log says why the stranger is not answered", refused.includes(c.stranger.aid), refused.slice(0, 200));
  const challenge = await c.waitFor("the pairing reply to the stranger", REPLY_TIMEOUT_MS, () => strangerInbox[0]);
  const code = /openclaw pairing approve acp-group ([A-Z0-9]+)/.exec(challenge.text)?.[1];
  check(c, "the stranger got the host's pairing reply with a code and the approve command", code !== undefined && challenge.text.includes(c.stranger.aid), JSON.stringify(challenge.text));
  check(c, "…and the model was never asked", directCalls(c.model.calls.slice(callsBefore), c.stranger.aid).length === 0, `${c.model.calls.length - callsBefore} model call(s) since`);
  const listed = await runOpenclaw(c.host, c.env, ["pairing", "list", CHANNEL, "--json"], 180_000);
  check(c, "openclaw pairing list acp-group shows the request", listed.code === 0 && listed.stdout.includes(code!) && listed.stdout.includes(c.stranger.aid), tail(listed));
  const approved = await runOpenclaw(c.host, c.env, ["pairing", "approve", CHANNEL, code!], 180_000);
  check(c, "openclaw pairing approve acp-group <code> approves the stranger", approved.code === 0 && approved.stdout.includes(c.stranger.aid), tail(approved));
  check(c, "…without making them the host's command owner", !/Command owner configured/.test(approved.stdout), tail(approved));
  callsBefore = c.model.calls.length;
  await c.stranger.sendDirect({ peer: c.bot, text: "I was approved, can we talk now?" });
  const answered = await c.waitFor("the agent's answer to the approved stranger", REPLY_TIMEOUT_MS, () => strangerInbox.find((m) => m.text === DIRECT_ANSWERS.stranger));
  const strangerCalls = directCalls(c.model.calls.slice(callsBefore), c.stranger.aid);
  check(c, "after approval the stranger's DM is one direct model turn", strangerCalls.length === 1 && /"chat_type":\s*"direct"/.test(strangerCalls[0]!.system), `${strangerCalls.length} call(s)`);
  check(c, "…and the answer reached them", answered.text === DIRECT_ANSWERS.stranger, JSON.stringify(answered.text));
}

function check(c: DirectStepsContext, name: string, ok: boolean, detail = ""): void {
  c.check(name, ok, detail);
}

function excerpt(text: string, near: string): string {
  const at = text.indexOf(near);
  return at < 0 ? `no ${near} in ${text.length} chars` : text.slice(Math.max(0, at - 20), at + 40).replace(/\s+/g, " ");
}

const tail = (r: { code: number | null; stdout: string; stderr: string }) => `code ${r.code}: ${`${r.stdout}\n${r.stderr}`.replace(/\s+/g, " ").trim().slice(-300)}`;
