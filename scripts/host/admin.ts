// The channel's own adapters in the real host, from the plugin the host installed, against a local
// ACP network started here (its own process, not the gateway's):
//   1. `openclaw channels add --channel acp-group --aid … --join <link> …` (non-interactive) creates
//      the identity in the `acp-group id` layout (key encrypted with ACP_SEED_PASSWORD), joins the
//      group, writes channels.acp-group; then network.seedPassword becomes a host secret reference
//      (`{ source: "env", … }`) that the gateway resolves (step 3 checks the plugin got the text)
//   1b. the same on a terminal without flags (the guided setup, driven through tmux as a person
//      types): the channel picked from the host's list, each question answered, the identity
//      created, the group joined, the config written
//   2. `openclaw doctor --non-interactive` reports an expired certificate planted for a second
//      identity, with the `acp-group id renew` command that fixes it, and a third identity's access
//      point that nobody serves, with the command that sets it
//   3. with the gateway running (shared-token auth, the token in the config the CLI reads),
//      `openclaw channels status --probe --json` shows the identity signed in and its groups joined,
//      and the expired one not ok with the reason
//   4. the per-group tool policy is what the host applies: after the owner addresses the agent in the
//      open group (no allowFrom: no tools) and in the lab group (`tools: { allow: ["web_fetch"] }`),
//      the host's own inspection — the gateway method `tools.effective` for each group's session —
//      lists no tools for the open group and exactly the lab group's tool there, and the model's
//      request on each turn offers the same
//   5. `openclaw directory groups|peers list` name the groups as targets and the owner with its
//      type, and `openclaw message send --target acp-group:<group>` (the CLI, another process) puts
//      the line into the group through the running gateway; `--target acp-group:<aid>` writes to
//      that agent or person directly (a session opened with them)
// Prints every check; on a miss, fails with the command's output.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { identityPaths } from "../../src/network/identity-store.ts";
import { generateIdentityKey, toCryptoKeys } from "../../src/network/x509.ts";
import { connectAgent, ensureIdentity } from "../../src/network/index.ts";
import { createGroupService, type GroupService } from "../../src/server/group-service.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { openLocalCa } from "../../src/server/network/local-ca.ts";
import { connectHuman, type HumanMember } from "./human.ts";
import { movesTo, openTerminal } from "./terminal.ts";
import { startMockModel, type MockModel, type ModelCall } from "./mock-model.ts";
import { createRunDir, freePort, type Gateway, hostEnv, mockModels, REPO, resolveHostPaths, runOpenclaw, sleep, startGateway, writeJson } from "./host-env.ts";

const CHANNEL = "acp-group";
const DOMAIN = "acp.local";
const OPEN = "open-room";
const LAB = "lab-room";
const BOT = `bot.${DOMAIN}`;
const OLD = `old.${DOMAIN}`;
const GONE = `gone.${DOMAIN}`;
const ALICE = `alice.${DOMAIN}`;
/** The identity the guided setup creates. */
const GUIDE = `guide.${DOMAIN}`;
const DAY = 86_400_000;
const GATEWAY_TOKEN = "admin-test-token";
/** The bot key's password, and the variable a host secret reference names. */
const SEED = "admin-test-seed";
const SEED_VAR = "ACP_BOT_SEED";

class CheckFailed extends Error {}
let passed = 0;
function check(name: string, ok: boolean, detail = ""): void {
  console.log(`${ok ? "  ✓" : "  ✗"} ${name}${detail ? ` — ${detail}` : ""}`);
  if (!ok) throw new CheckFailed(name);
  passed++;
}
const step = (title: string) => console.log(`\n== ${title}`);
async function waitUntil(timeoutMs: number, ok: () => boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) return false;
    await sleep(200);
  }
  return true;
}

async function main(): Promise<void> {
  const host = resolveHostPaths();
  // `channels add` finds a channel's setup flags only in installed plugins (not in plugins.load.paths):
  // this run installs the tarball scripts/host/plugin-install.sh packed, as a user does.
  const packDir = join(host.dir, "plugin", createHash("sha1").update(REPO).digest("hex").slice(0, 12), "pack");
  const tgz = existsSync(packDir) ? readdirSync(packDir).find((f) => f.endsWith(".tgz")) : undefined;
  if (!tgz) throw new Error(`no tarball in ${packDir}: run scripts/host/plugin-install.sh first`);
  const pluginDir = join(packDir, tgz);
  const run = createRunDir(host, "admin");
  const env: NodeJS.ProcessEnv = { ...hostEnv(run), [SEED_VAR]: SEED };
  delete env.ACP_SEED_PASSWORD;
  const acpStateDir = join(run.root, "acp-state");
  console.log(`OpenClaw ${host.version}; plugin from ${pluginDir}; run dir ${run.root}`);
  let net: LocalNetwork | undefined;
  let model: MockModel | undefined;
  let gateway: Gateway | undefined;
  let alice: HumanMember | undefined;
  let lastOutput = "";
  try {
    const server: GroupService = createGroupService({
      domain: DOMAIN,
      groups: {
        [OPEN]: { name: "Open room", members: { [ALICE]: { human: true } } },
        [LAB]: { name: "Lab", members: { [ALICE]: { human: true } } },
      },
      rateLimit: null,
    });
    net = await startLocalNetwork({ domain: DOMAIN, stateDir: join(run.root, "local-network"), tls: true, serviceAgents: [server] });
    const tls = { caFile: net.caFile };
    model = await startMockModel({ answer: () => "Noted." });
    const port = await freePort();
    // The host config before setup: the mock model, no channels.acp-group yet; then the plugin installed.
    writeJson(run.config, { gateway: { mode: "local" }, update: { checkOnStart: false }, models: { catalogRefresh: { enabled: false } } });
    step("0. openclaw plugins install npm-pack:<tarball>");
    const install = await runOpenclaw(host, env, ["plugins", "install", `npm-pack:${pluginDir}`, "--force", "--accept-capabilities"], 300_000);
    lastOutput = `${install.stdout}\n${install.stderr}`;
    check("plugins install exits 0", install.code === 0, `code ${install.code}`);
    const installed = JSON.parse(readFileSync(run.config, "utf8")) as { plugins?: Record<string, unknown> };
    writeJson(run.config, {
      ...installed,
      // A token in the config: the CLI sends it (`channels status` refuses to connect without one).
      gateway: { mode: "local", port, bind: "loopback", auth: { mode: "token", token: GATEWAY_TOKEN } },
      update: { checkOnStart: false },
      agents: { defaults: { model: { primary: "mock/mock-model" }, workspace: join(run.root, "workspace") } },
      models: mockModels(model.baseUrl),
      plugins: { ...installed.plugins, allow: [CHANNEL] },
    });

    step("1. openclaw channels add (non-interactive flags)");
    // The new key is encrypted with ACP_SEED_PASSWORD, given to this command only.
    const add = await runOpenclaw(host, { ...env, ACP_SEED_PASSWORD: SEED }, [
      "channels", "add", "--channel", CHANNEL, "--account", "bot",
      "--aid", BOT, "--access-point-url", net.localUrl, "--ca-file", net.caFile, "--state-dir", acpStateDir,
      "--owner", ALICE, "--join", server.joinLink(OPEN), "--groups", LAB,
    ], 420_000);
    lastOutput = `${add.stdout}\n${add.stderr}`;
    check("channels add exits 0", add.code === 0, `code ${add.code}`);
    const paths = identityPaths({ aid: BOT, stateDir: acpStateDir });
    check("the identity is in the acp-group id layout", existsSync(paths.key) && existsSync(paths.cert), paths.dir);
    check("…its key encrypted", readFileSync(paths.key, "utf8").includes("BEGIN ENCRYPTED PRIVATE KEY"));
    check("the identity joined the group by its link", server.members(OPEN).includes(BOT), `members of ${OPEN}: ${server.members(OPEN).join(", ")}`);
    const written = JSON.parse(readFileSync(run.config, "utf8")) as { channels?: Record<string, { identities?: Record<string, { aid?: string; owner?: string }>; groups?: Record<string, unknown>; stateDir?: string }> };
    const section = written.channels?.[CHANNEL];
    check(
      "channels.acp-group was written",
      section?.identities?.bot?.aid === BOT && section.identities.bot.owner === ALICE && section.stateDir === acpStateDir && OPEN in (section.groups ?? {}) && LAB in (section.groups ?? {}),
      JSON.stringify(section),
    );
    server.addMember(LAB, BOT);

    step("1b. openclaw channels add on a terminal (the guided setup)");
    // A second host config (the plugin installed, no channels yet), so the guided flow starts as a
    // new user's does; the default acp-group state dir under the host's state dir.
    const guidedConfig = join(run.state, "guided.json");
    writeJson(guidedConfig, { ...JSON.parse(readFileSync(run.config, "utf8")), channels: undefined });
    const guidedEnv = { ...env, OPENCLAW_CONFIG_PATH: guidedConfig, ACP_SEED_PASSWORD: SEED };
    const term = openTerminal({ argv: [host.node, host.openclaw, "channels", "add"], env: guidedEnv, name: "guided" });
    try {
      lastOutput = "";
      await term.waitFor(/◆ {2}Set up a chat channel now\?/, 240_000);
      term.press("Enter");
      term.press(...movesTo(await term.waitFor(/◆ {2}Select a channel[\s\S]*navigate/), "ACP group chats"), "Enter");
      const answer = async (prompt: RegExp, text: string, clear = false) => {
        await term.waitFor(prompt);
        if (clear) term.press(...Array<string>(80).fill("BSpace"));
        term.type(text);
        term.press("Enter");
      };
      await answer(/◆ {2}Account id/, "guide", true);
      await answer(/◆ {2}Agent id on the ACP network/, GUIDE);
      await answer(/◆ {2}Access point URL/, net.localUrl, true);
      await answer(/◆ {2}CA certificate to trust/, net.caFile, true);
      await answer(/◆ {2}Your own aid/, ALICE, true);
      await answer(/◆ {2}Invite links to join/, server.joinLink(OPEN));
      await answer(/◆ {2}Other groups to answer in/, LAB);
      // Back at the channel list: done. Then the host's own questions, each answered "no"/"skip".
      term.press(...movesTo(await term.waitFor(/joined[\s\S]*◆ {2}Select a channel[\s\S]*navigate/, 120_000), "Finished"), "Enter");
      await term.waitFor(/◆ {2}Set up administration/);
      term.press(...movesTo(term.screen(), "Skip for now"), "Enter");
      await term.waitFor(/◆ {2}Name these channel accounts now\?/);
      term.press(...movesTo(term.screen(), "No"), "Enter");
      await term.waitFor(/◆ {2}Route these channel accounts to agents now\?/);
      term.press(...movesTo(term.screen(), "No"), "Enter");
      await term.waitFor(/\[command exited \d+\]/, 120_000);
      lastOutput = term.screen();
      check("the guided channels add exits 0", term.exitCode() === 0, `exit ${term.exitCode()}`);
    } finally {
      term.close();
    }
    check("…saying the identity is ready and the group joined", /guide\.acp\.local: identity ready, joined open-room/.test(lastOutput));
    const guided = (JSON.parse(readFileSync(guidedConfig, "utf8")) as typeof written).channels?.[CHANNEL];
    check(
      "…and wrote channels.acp-group from the answers",
      guided?.identities?.guide?.aid === GUIDE && guided.identities.guide.owner === ALICE && OPEN in (guided.groups ?? {}) && LAB in (guided.groups ?? {}),
      JSON.stringify(guided),
    );
    const guidePaths = identityPaths({ aid: GUIDE, stateDir: guided!.stateDir! });
    check("…the new identity in the acp-group id layout, its key encrypted", existsSync(guidePaths.cert) && readFileSync(guidePaths.key, "utf8").includes("BEGIN ENCRYPTED PRIVATE KEY"), guidePaths.dir);
    check("…and a member of the group it was invited to", server.members(OPEN).includes(GUIDE), `members of ${OPEN}: ${server.members(OPEN).join(", ")}`);

    step("2. openclaw doctor reports a planted expired certificate");
    const ca = await openLocalCa({ dir: dirname(net.caFile), domain: DOMAIN, now: Date.now() });
    const { privateKey } = generateIdentityKey();
    const oldPaths = identityPaths({ aid: OLD, stateDir: acpStateDir });
    mkdirSync(join(oldPaths.dir, "private"), { recursive: true });
    mkdirSync(join(oldPaths.dir, "public"), { recursive: true });
    writeFileSync(oldPaths.key, privateKey.export({ type: "pkcs8", format: "pem" }).toString());
    writeFileSync(oldPaths.cert, await ca.issue({ aid: OLD, publicKey: toCryptoKeys(privateKey).publicKey, now: Date.now() - 400 * DAY, days: 395 }));
    const cfg = JSON.parse(readFileSync(run.config, "utf8"));
    cfg.channels[CHANNEL].identities.old = { aid: OLD, accessPointUrl: net.localUrl, enabled: true, owner: ALICE };
    // An identity whose access point nobody serves (a port that was free a moment ago).
    const deadUrl = `http://127.0.0.1:${await freePort()}`;
    cfg.channels[CHANNEL].identities.gone = { aid: GONE, accessPointUrl: deadUrl, owner: ALICE };
    // From here on the password is a host secret reference (an environment variable the gateway
    // and the CLI get); the config holds no password text.
    cfg.channels[CHANNEL].network = { ...cfg.channels[CHANNEL].network, seedPassword: { source: "env", provider: "default", id: SEED_VAR } };
    // The lab group's tools: one named tool, so the host's filtering is visible (step 4).
    cfg.channels[CHANNEL].groups[LAB] = { tools: { allow: ["web_fetch"] } };
    writeJson(run.config, cfg);
    const doctor = await runOpenclaw(host, env, ["doctor", "--non-interactive"], 420_000);
    lastOutput = `${doctor.stdout}\n${doctor.stderr}`;
    // Doctor draws its warnings in boxes and wraps them: read the text without the frame.
    const flat = lastOutput.replace(/[│├┤╮╯╭╰─◇┌└]/g, " ").replace(/\s+/g, " ");
    const at = flat.indexOf(`identities.old (${OLD}): the certificate expired on`);
    const finding = at < 0 ? undefined : flat.slice(at, flat.indexOf("`", flat.indexOf("`", at) + 1) + 1);
    check("doctor names the expired certificate", finding !== undefined, finding ?? "no finding about it");
    // (compared without blanks: the frame may break a long path where there was none)
    const renew = `\`acp-group id renew ${OLD} --state-dir ${acpStateDir} --ap-url ${net.localUrl} --ca-file ${net.caFile}\``;
    check("…with the command that renews it", finding?.replace(/\s/g, "").includes(renew.replace(/\s/g, "")) === true, renew);
    check("…and not the valid one", !flat.includes(`identities.bot (${BOT}): the certificate`));
    const dead = `identities.gone (${GONE}): the access point ${deadUrl} cannot be reached: connection refused`;
    check("doctor names the access point that cannot be reached", flat.includes(dead), dead);
    check("…with the command that sets it", flat.replace(/\s/g, "").includes(`\`openclawconfigsetchannels.acp-group.identities.gone.accessPointUrl<accesspointURL>\``));
    check("…and no unreachable or clock finding for the running network", !flat.includes(`identities.bot (${BOT}): the access point`) && !flat.includes("this machine's clock"));
    // The gateway below runs the identities that can sign in.
    const afterDoctor = JSON.parse(readFileSync(run.config, "utf8"));
    delete afterDoctor.channels[CHANNEL].identities.gone;
    writeJson(run.config, afterDoctor);

    step("3. openclaw channels status --probe --json against the running gateway");
    // The gateway requires the config's shared token; the CLI sends it, which is what admits an
    // operator client that has no paired device.
    gateway = startGateway(host, env, { port, logFile: join(run.root, "gateway.log"), auth: { token: GATEWAY_TOKEN } });
    await gateway.waitForLog(/\[gateway\] ready/, 180_000);
    await waitUntil(60_000, () => server.onlineAids(OPEN).includes(BOT));
    // The gateway resolved the reference itself (the channel's secret contract): the plugin got the
    // password as text, though the config file holds only the reference.
    const startLine = gateway.log().split("\n").find((l) => l.includes("openclaw.account-start") && l.includes(`"aid":"${BOT}"`)) ?? "";
    check("the gateway resolved network.seedPassword (env reference) before the channel started", startLine.includes('"seedPassword":"text"'), startLine.slice(startLine.indexOf("openclaw.account-start")));
    const st = await runOpenclaw(host, env, ["channels", "status", "--channel", CHANNEL, "--probe", "--json"], 240_000);
    lastOutput = `${st.stdout}\n${st.stderr}`;
    check("channels status --probe exits 0", st.code === 0, `code ${st.code}`);
    type ProbedGroup = { groupId?: string; session?: string };
    type Probed = { accountId?: string; connected?: boolean; probe?: { ok?: boolean; signedIn?: boolean; why?: string; profile?: string | null; groups?: ProbedGroup[] } };
    let report: { channels?: Record<string, { signedIn?: boolean }>; channelAccounts?: Record<string, Probed[]> } = {};
    try {
      report = JSON.parse(st.stdout.slice(st.stdout.indexOf("{")));
    } catch {
      // left empty: the checks below fail and print the output
    }
    const accounts = report.channelAccounts?.[CHANNEL] ?? [];
    const bot = accounts.find((a) => a.accountId === "bot");
    const old = accounts.find((a) => a.accountId === "old");
    check("the summary says signed in", report.channels?.[CHANNEL]?.signedIn === true, JSON.stringify(report.channels?.[CHANNEL]));
    check("the bot account's probe (its encrypted key opened with that password): ok and signed in", bot?.probe?.ok === true && bot.probe.signedIn === true && bot.connected === true, JSON.stringify(bot?.probe && { ok: bot.probe.ok, signedIn: bot.probe.signedIn, why: bot.probe.why }));
    const sessions = Object.fromEntries((bot?.probe?.groups ?? []).map((g) => [g.groupId, g.session]));
    check("…with both groups joined and their sessions open", sessions[OPEN] === "open" && sessions[LAB] === "open", JSON.stringify(sessions));
    check("…and where its agent.md stands (published, pending while retried, waiting or off)", ["published", "pending", "waiting", "off"].includes(bot?.probe?.profile ?? ""), JSON.stringify(bot?.probe?.profile));
    check("the expired identity's probe: not ok, saying why", old?.probe?.ok === false && old.probe.signedIn === false && /certificate expired/.test(old.probe.why ?? ""), JSON.stringify(old?.probe?.why));

    step("4. the per-group tool policy, as the host applies it (gateway method tools.effective)");
    const aliceId = await ensureIdentity({ aid: ALICE, stateDir: join(run.root, "humans"), accessPointUrl: net.localUrl, noPassphrase: true, tls });
    const aliceAgent = connectAgent({ identity: aliceId, accessPointUrl: net.localUrl, tls });
    const aliceDms: string[] = [];
    aliceAgent.onDirect((dm) => {
      if (dm.peer === BOT) aliceDms.push(dm.text);
    });
    alice = await connectHuman({ agent: aliceAgent, service: server.aid });
    // The owner, naming the agent: one turn in each group, so the host records both group sessions.
    await alice.say(OPEN, "bot, a quick hello from the open room");
    await alice.say(LAB, "bot, a quick hello from the lab");
    const turnOf = (groupId: string) => (c: ModelCall) => c.system.includes("mentioned_in_context=") && c.lastUser.includes(groupId === OPEN ? "open room" : "from the lab");
    const m = model;
    const turns = await waitUntil(120_000, () => m.calls.some(turnOf(OPEN)) && m.calls.some(turnOf(LAB)));
    check("one model turn per group", turns, `${model.calls.length} model call(s)`);
    const listed = await runOpenclaw(host, env, ["gateway", "call", "sessions.list", "--json"], 180_000);
    lastOutput = `${listed.stdout}\n${listed.stderr}`;
    const keys = [...listed.stdout.matchAll(/"(agent:[^"]+:acp-group:group:[^"]+)"/g)].map((x) => x[1]!);
    const keyOf = (groupId: string) => keys.find((k) => k.endsWith(`:group:${groupId}`));
    check("the host has a session per group", keyOf(OPEN) !== undefined && keyOf(LAB) !== undefined, [...new Set(keys)].join(", "));
    const effective = async (groupId: string): Promise<string[] | undefined> => {
      const res = await runOpenclaw(host, env, ["gateway", "call", "tools.effective", "--params", JSON.stringify({ sessionKey: keyOf(groupId) }), "--json"], 180_000);
      lastOutput = `${res.stdout}\n${res.stderr}`;
      try {
        const inv = JSON.parse(res.stdout.slice(res.stdout.indexOf("{"))) as { groups?: Array<{ tools?: Array<{ id?: string }> }> };
        return inv.groups ? inv.groups.flatMap((g) => (g.tools ?? []).map((t) => String(t.id))) : undefined;
      } catch {
        return undefined;
      }
    };
    const openTools = await effective(OPEN);
    const labTools = await effective(LAB);
    check("tools.effective answers for both sessions", openTools !== undefined && labTools !== undefined, `${openTools?.length ?? "no answer"} and ${labTools?.length ?? "no answer"} tool(s)`);
    check("the open group (no allowFrom): no tools at all", openTools!.length === 0, JSON.stringify(openTools));
    check("the lab group: exactly its configured tool", JSON.stringify(labTools) === JSON.stringify(["web_fetch"]), JSON.stringify(labTools));
    // The same in what the host sent the model on each group's turn: its tool entries, and the tools
    // its prompt offers behind them (2026.9.6 sends `tool_search`/`tool_describe`/`tool_call` and
    // lists the tools they reach as "deferred-schema tools").
    const offered = (c: ModelCall | undefined) => {
      const tools = (c?.body as { tools?: Array<{ name?: string; function?: { name?: string } }> } | undefined)?.tools ?? [];
      const deferred = c?.system.split("Available deferred-schema tools:")[1]?.split("\n\n")[0] ?? "";
      return { sent: tools.map((t) => t.function?.name ?? t.name ?? "?"), deferred: [...deferred.matchAll(/^- (\S+) \(/gm)].map((x) => x[1]!) };
    };
    const sentOpen = offered(model.calls.find(turnOf(OPEN)));
    const sentLab = offered(model.calls.find(turnOf(LAB)));
    check("…the model's request in the open group carried no tools", sentOpen.sent.length === 0 && sentOpen.deferred.length === 0, JSON.stringify(sentOpen));
    check("…and in the lab group only web_fetch", sentLab.sent.length > 0 && JSON.stringify(sentLab.deferred) === JSON.stringify(["web_fetch"]), JSON.stringify(sentLab));

    step("5. the directory and the message target, through the host's own commands");
    const dirGroups = await runOpenclaw(host, env, ["directory", "groups", "list", "--channel", CHANNEL, "--account", "bot", "--json"], 180_000);
    lastOutput = `${dirGroups.stdout}\n${dirGroups.stderr}`;
    check("directory groups list names both groups as targets", dirGroups.code === 0 && dirGroups.stdout.includes(`group:${OPEN}`) && dirGroups.stdout.includes(`group:${LAB}`), dirGroups.stdout.replace(/\s+/g, " ").trim().slice(0, 300));
    const dirPeers = await runOpenclaw(host, env, ["directory", "peers", "list", "--channel", CHANNEL, "--account", "bot", "--json"], 180_000);
    lastOutput = `${dirPeers.stdout}\n${dirPeers.stderr}`;
    check("directory peers list names the owner with its type", dirPeers.code === 0 && dirPeers.stdout.includes(`${ALICE} (human, owner)`), dirPeers.stdout.replace(/\s+/g, " ").trim().slice(0, 300));
    const posted = "Posted through the host's message command.";
    const send = await runOpenclaw(host, env, ["message", "send", "--channel", CHANNEL, "--account", "bot", "--target", `${CHANNEL}:${LAB}`, "--message", posted, "--json"], 180_000);
    lastOutput = `${send.stdout}\n${send.stderr}`;
    check("message send --target acp-group:<group> exits 0", send.code === 0, `code ${send.code}`);
    const arrived = await waitUntil(30_000, () => server.history(LAB).some((msg) => msg.sender === BOT && msg.content === posted));
    check("…and the line is in that group, from the agent", arrived, JSON.stringify(server.history(LAB).slice(-3).map((msg) => [msg.sender, msg.content])));
    const dmText = "A direct line through the host's message command.";
    const dm = await runOpenclaw(host, env, ["message", "send", "--channel", CHANNEL, "--account", "bot", "--target", `${CHANNEL}:${ALICE}`, "--message", dmText, "--json"], 180_000);
    lastOutput = `${dm.stdout}\n${dm.stderr}`;
    check("message send --target acp-group:<aid> exits 0", dm.code === 0, `code ${dm.code}`);
    const dmArrived = await waitUntil(30_000, () => aliceDms.includes(dmText));
    check("…and the owner got it as a direct message from the agent, in no group", dmArrived && !server.history(LAB).some((msg) => msg.content === dmText) && !server.history(OPEN).some((msg) => msg.content === dmText), JSON.stringify(aliceDms));
    console.log(`\nADMIN OK: ${passed} checks passed in the real host (OpenClaw ${host.version}).`);
  } catch (err) {
    console.error(`\nADMIN FAILED: ${err instanceof CheckFailed ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    if (lastOutput) console.error(`\n-- last command output (tail):\n${lastOutput.split("\n").slice(-60).join("\n")}`);
    process.exitCode = 1;
  } finally {
    await alice?.close().catch(() => undefined);
    if (gateway) {
      const res = await gateway.stop(30_000);
      if (!res.exited) gateway.kill();
    }
    if (model) writeJson(join(run.root, "model-calls.json"), model.calls);
    await model?.close();
    await net?.close();
  }
}

await main();
