// The proof in the real host: OpenClaw loads this package from the checkout as the `acp-group`
// channel, with one identity (its own key, issued by the local network's CA) in one group on the
// local network (access point, message service, group service) and a local OpenAI-compatible
// mock as its model; scripted humans, signed in with their own keys, talk over real sockets.
//   1. three unmentioned messages within a second, then one naming the agent → exactly one model
//      call, situation block says mentioned_in_context=true, body holds all four in order; reply arrives
//   2. a question whose mock answer is long, while the group is HEATED → trimmed in the group
//   3. the same answer again → the duplicate is not sent
//   4–5. direct messages: the owner's DM is a direct turn answered back; a stranger meets the
//      host's pairing and, once approved with `openclaw pairing approve`, is answered (e2e-direct.ts)
//   6. stop the gateway → the plugin closes, the process exits, state is saved
// Prints every check; on a miss, fails loudly with the gateway log tail.
// Needs: scripts/host/install.sh done, package.json `openclaw.extensions` (or ACP_PLUGIN_DIR).
import { join } from "node:path";
import type { GroupMessage } from "../../src/types.ts";
import { connectAgent, ensureIdentity } from "../../src/network/index.ts";
import { createGroupService, type GroupService } from "../../src/server/group-service.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { createFileStateStore } from "../../src/state/file-store.ts";
import { connectHuman, type HumanMember } from "./human.ts";
import { directAnswer, runDirectSteps } from "./e2e-direct.ts";
import { startMockModel, type MockModel, type ModelCall } from "./mock-model.ts";
import {
  createRunDir,
  freePort,
  hostEnv,
  mockModels,
  resolveHostPaths,
  resolvePluginDir,
  sleep,
  startGateway,
  writeJson,
  type Gateway,
} from "./host-env.ts";
import type { NetworkAgent } from "../../src/network/index.ts";

const CHANNEL = "acp-group";
const GROUP = "room-1";
const DOMAIN = "acp.local";
const BOT = { id: "bot", aid: `bot.${DOMAIN}`, name: "Echo" };
const ALICE = { aid: `alice.${DOMAIN}` };
const CAROL = { aid: `carol.${DOMAIN}` };
/** Nobody the agent knows: not in any group or list. */
const DAVE = { aid: `dave.${DOMAIN}` };

const SHORT_ANSWER = "Hi Carol, the new lint rules forbid floating promises.";
const LONG_ANSWER =
  "The deploy failed because the cache key changed. I rebuilt the cache and reran the job. " +
  "It passed on the second try. Next time we should pin the toolchain version. I can write that up tomorrow.";
/** A message containing this word gets the long answer from the mock model. */
const LONG_TRIGGER = "deploy";

const STARTUP_TIMEOUT_MS = Number(process.env.E2E_STARTUP_TIMEOUT_MS ?? 240_000);
const REPLY_TIMEOUT_MS = 120_000;
const SETTLE_MS = 3_000;

class CheckFailed extends Error {}

const results: Array<{ name: string; ok: boolean; detail: string }> = [];
function check(name: string, ok: boolean, detail = ""): void {
  results.push({ name, ok, detail });
  console.log(`${ok ? "  ✓" : "  ✗"} ${name}${detail ? ` — ${detail}` : ""}`);
  if (!ok) throw new CheckFailed(name);
}
const step = (title: string) => console.log(`\n== ${title}`);

/** Model calls that came from our channel (they carry our situation block). */
const ourCalls = (calls: readonly ModelCall[]) => calls.filter((c) => c.system.includes("mentioned_in_context="));
const botMessages = (server: GroupService) => server.history(GROUP).filter((m) => m.sender === BOT.aid);

async function waitFor<T>(what: string, timeoutMs: number, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new CheckFailed(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

async function waitForBotMessage(server: GroupService, after: number): Promise<GroupMessage> {
  return waitFor("the agent's reply in the group", REPLY_TIMEOUT_MS, () => botMessages(server).find((m) => Number(m.msgId) > after));
}

function lastMsgId(server: GroupService): number {
  const last = server.history(GROUP).at(-1);
  return last ? Number(last.msgId) : 0;
}

/** Sentences in a reply (Latin and CJK end marks). */
const sentenceCount = (text: string) => (text.match(/[.!?。！？]+(\s|$)/g) ?? []).length;

async function main(): Promise<void> {
  const host = resolveHostPaths();
  const pluginDir = resolvePluginDir();
  const run = createRunDir(host, "e2e");
  const acpStateDir = join(run.root, "acp-state");
  console.log(`OpenClaw ${host.version} (${host.dir}); plugin from ${pluginDir}; run dir ${run.root}`);

  let server: GroupService | undefined;
  let net: LocalNetwork | undefined;
  let model: MockModel | undefined;
  let gateway: Gateway | undefined;
  const humans: HumanMember[] = [];
  let stranger: NetworkAgent | undefined;
  try {
    server = createGroupService({
      domain: DOMAIN,
      groups: {
        [GROUP]: {
          name: "E2E room",
          members: {
            [ALICE.aid]: { human: true },
            [CAROL.aid]: { human: true },
            [BOT.aid]: {},
          },
        },
      },
      // The scripted humans post faster than the default member limit allows.
      rateLimit: null,
    });
    const localNet = await startLocalNetwork({ domain: DOMAIN, stateDir: join(run.root, "local-network"), tls: true, serviceAgents: [server] });
    net = localNet;
    // The agent's identity lives where the plugin looks for it (its state dir); the humans' beside the network.
    const tls = { caFile: localNet.caFile };
    await ensureIdentity({ aid: BOT.aid, stateDir: acpStateDir, accessPointUrl: localNet.localUrl, noPassphrase: true, tls });
    const humanIds = await Promise.all(
      [ALICE.aid, CAROL.aid].map((aid) => ensureIdentity({ aid, stateDir: join(run.root, "humans"), accessPointUrl: localNet.localUrl, noPassphrase: true, tls })),
    );
    const daveId = await ensureIdentity({ aid: DAVE.aid, stateDir: join(run.root, "humans"), accessPointUrl: localNet.localUrl, noPassphrase: true, tls });
    model = await startMockModel({ answer: ({ lastUser }) => directAnswer(lastUser) ?? (lastUser.includes(LONG_TRIGGER) ? LONG_ANSWER : SHORT_ANSWER) });
    const port = await freePort();
    writeJson(run.config, {
      gateway: { mode: "local", port, bind: "loopback" },
      update: { checkOnStart: false },
      // The host's command owner is the identity's owner (as docs/openclaw.md advises): approving a
      // paired sender must not make them the owner.
      commands: { ownerAllowFrom: [`${CHANNEL}:${ALICE.aid}`] },
      // One session per DM peer, as the host advises when more than one person may DM the agent.
      session: { dmScope: "per-channel-peer" },
      agents: { defaults: { model: { primary: "mock/mock-model" }, workspace: join(run.root, "workspace") } },
      // No hosted catalog download: the only model is our local mock.
      models: mockModels(model.baseUrl),
      // Only our plugin: the bundled ones are not needed here and cost startup time.
      plugins: { allow: [CHANNEL], load: { paths: [pluginDir] }, entries: { [CHANNEL]: { enabled: true } } },
      channels: {
        [CHANNEL]: {
          stateDir: acpStateDir,
          // TLS verified against the local network's CA: no insecure opt-out on this path.
          network: { caFile: localNet.caFile },
          humans: [ALICE.aid, CAROL.aid],
          identities: { [BOT.id]: { aid: BOT.aid, name: BOT.name, owner: ALICE.aid, accessPointUrl: localNet.localUrl } },
          groups: {
            // Budgets high enough that this test sees the reply policy, not the budget gate.
            "*": { budget: { unaddressed: { "5m": { messages: 50, tokens: 500000 }, "3h": { messages: 200, tokens: 2000000 } } } },
            [GROUP]: { subject: "E2E room" },
          },
        },
      },
    });

    step("start: openclaw gateway run");
    const started = Date.now();
    gateway = startGateway(host, hostEnv(run), { port, logFile: join(run.root, "gateway.log") });
    await gateway.waitForLog(/openclaw\.account-start/, STARTUP_TIMEOUT_MS);
    // The host runs state maintenance right after "ready"; let it settle before the first turn.
    await gateway.waitForLog(/\[gateway\] ready/, 60_000);
    const srv = server;
    await waitFor("the identity signed in and registered online with the group service", 60_000, () => (srv.onlineAids(GROUP).includes(BOT.aid) ? true : undefined));
    check("the host loaded the plugin and the identity signed in with its key", true, `${Math.round((Date.now() - started) / 1000)} s after start`);
    const humanAgents = humanIds.map((identity) => connectAgent({ identity, accessPointUrl: localNet.localUrl, tls }));
    for (const agent of humanAgents) humans.push(await connectHuman({ agent, service: server.aid }));
    stranger = connectAgent({ identity: daveId, accessPointUrl: localNet.localUrl, tls });
    await stranger.ready;
    const [alice, carol] = humans as [HumanMember, HumanMember];
    await sleep(1_000);

    step("1. three unmentioned messages within a second, then one naming the agent");
    const step1 = [
      { who: alice, text: "Morning all, the standup notes are up." },
      { who: carol, text: "Has anyone looked at the new lint rules?" },
      { who: alice, text: "They landed yesterday, I think." },
      { who: carol, text: "Echo, can you sum up what changed?" },
    ];
    let callsBefore = model.calls.length;
    let after = lastMsgId(server);
    for (const [i, m] of step1.entries()) {
      if (i > 0) await sleep(250);
      await m.who.say(GROUP, m.text);
    }
    const reply1 = await waitForBotMessage(server, after);
    await sleep(SETTLE_MS);
    let calls = ourCalls(model.calls.slice(callsBefore));
    check("exactly one model call", calls.length === 1, `${calls.length} call(s) from the channel, ${model.calls.length - callsBefore} in all`);
    const call1 = calls[0]!;
    check("its system prompt has the situation block with mentioned_in_context=true", /mentioned_in_context=true/.test(call1.system));
    const positions = step1.map((m) => call1.lastUser.indexOf(m.text));
    check(
      "its body holds all four messages in order",
      positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1]!)),
      `positions ${positions.join(", ")}`,
    );
    check("the agent's reply arrived in the group", reply1.content === SHORT_ANSWER, JSON.stringify(reply1.content));

    step("2. a long, multi-sentence answer while the group is HEATED");
    callsBefore = model.calls.length;
    after = lastMsgId(server);
    for (let i = 0; i < 14; i++) {
      const who = i % 2 === 0 ? alice : carol;
      await who.say(GROUP, `Side chatter ${i + 1}: ${i % 2 === 0 ? "the coffee machine is fixed" : "lunch at noon?"}`);
      await sleep(100);
    }
    await alice.say(GROUP, `Echo, why did the ${LONG_TRIGGER} fail last night?`);
    const reply2 = await waitForBotMessage(server, after);
    await sleep(SETTLE_MS);
    calls = ourCalls(model.calls.slice(callsBefore));
    check("one model call for the question", calls.length === 1, `${calls.length} call(s)`);
    check("the situation block says state=HEATED", /state=HEATED/.test(calls[0]!.system));
    const sent2 = reply2.content;
    const core2 = sent2.replace(/[…\s]+$/u, "");
    check(
      "the message in the group is trimmed to the reply type",
      sent2.length < LONG_ANSWER.length && LONG_ANSWER.startsWith(core2) && sentenceCount(sent2) <= 2,
      `${LONG_ANSWER.length} chars, ${sentenceCount(LONG_ANSWER)} sentences from the model → ${JSON.stringify(sent2)}`,
    );

    step("3. the same answer again");
    callsBefore = model.calls.length;
    after = lastMsgId(server);
    const logOffset = gateway.log().length;
    await alice.say(GROUP, `Echo, sorry, I missed it: why did the ${LONG_TRIGGER} fail?`);
    const skipLine = await gateway.waitForLog(/monitor\.dispatch.*"skipReason":"duplicate-of-recent-reply"/, REPLY_TIMEOUT_MS, logOffset);
    const skipDetail = /"detail":"([^"]*)"/.exec(skipLine)?.[1];
    await sleep(SETTLE_MS);
    calls = ourCalls(model.calls.slice(callsBefore));
    check("one model call, answered with the same text", calls.length === 1 && calls[0]!.reply === LONG_ANSWER, `${calls.length} call(s)`);
    const newBot = botMessages(server).filter((m) => Number(m.msgId) > after);
    check(
      "the duplicate is not sent",
      newBot.length === 0,
      newBot.length ? `sent ${JSON.stringify(newBot[0]!.content)}` : `monitor.dispatch skipReason=duplicate-of-recent-reply${skipDetail ? ` (${skipDetail})` : ""}`,
    );

    await runDirectSteps({
      host,
      env: hostEnv(run),
      gateway,
      model,
      bot: BOT.aid,
      owner: humanAgents[0]!,
      stranger,
      check,
      step,
      waitFor,
    });

    step("6. stop the gateway");
    const lastId = lastMsgId(server);
    const stopped = await gateway.stop(90_000);
    check("the gateway process exits on SIGTERM", stopped.exited, `after ${stopped.ms} ms (code ${stopped.code}, signal ${stopped.signal})`);
    check("the plugin closed cleanly", /openclaw\.account-stopped/.test(gateway.log()) && !/openclaw\.account-failed/.test(gateway.log()));
    let survivors = false;
    try {
      process.kill(-gateway.pid, 0);
      survivors = true;
    } catch {
      survivors = false;
    }
    check("no process left behind", !survivors, survivors ? `process group ${gateway.pid} still has members` : "");
    const saved = createFileStateStore({ dir: acpStateDir }).loadGroup(BOT.id, GROUP);
    check(
      "state is saved",
      saved !== undefined && saved.cursor >= lastId && saved.replyHashes.length >= 2 && saved.lastSelfSpeakAt !== null,
      saved ? `cursor ${saved.cursor} (last msg ${lastId}), ${saved.replyHashes.length} reply hashes` : `nothing for ${BOT.id}/${GROUP} in ${acpStateDir}`,
    );
    console.log(`\nE2E OK: ${results.length} checks passed in the real host (OpenClaw ${host.version}).`);
  } catch (err) {
    console.error(`\nE2E FAILED: ${err instanceof CheckFailed ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    if (model) {
      console.error(`\n-- model calls (${model.calls.length}):`);
      for (const c of model.calls) console.error(`   ${new Date(c.at).toISOString()} ${c.url} user=${JSON.stringify(c.lastUser.slice(-200))} → ${JSON.stringify(c.reply.slice(0, 60))}`);
    }
    if (server) {
      console.error(`\n-- group ${GROUP} history:`);
      for (const m of server.history(GROUP)) console.error(`   [${m.msgId}] ${m.sender}: ${m.content}`);
    }
    if (gateway) console.error(`\n-- gateway log tail (${gateway.logFile}):\n${gateway.tail(120)}`);
    process.exitCode = 1;
  } finally {
    if (model) writeJson(join(run.root, "model-calls.json"), model.calls);
    await Promise.all(humans.map((h) => h.close().catch(() => undefined)));
    await stranger?.close().catch(() => undefined);
    if (gateway) {
      const res = await gateway.stop(30_000);
      if (!res.exited) gateway.kill();
    }
    await model?.close();
    await net?.close();
  }
}

await main();
