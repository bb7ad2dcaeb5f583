// The guided setup the host runs on a terminal (`openclaw channels add` without flags, `openclaw
// onboard`), driven by a scripted prompter in place of the host's terminal prompts (the only
// stand-in: no TTY here). Against a real local ACP network over TLS on 127.0.0.1: every prompt is
// answered in order, the identity is created on disk in a temp state dir, the invite link is joined,
// and the returned config is checked whole.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAcpGroupSetupWizard, type AcpGroupWizardPrompter } from "../../src/openclaw/setup-wizard.ts";
import { createJsonLogger } from "../../src/log.ts";
import { identityPaths } from "../../src/network/identity-store.ts";
import { createGroupService, type GroupService } from "../../src/server/group-service.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { tempDir } from "../network/support.ts";

type Step =
  | { kind: "text"; message: string; initialValue?: string; answer: string; rejects?: string }
  | { kind: "confirm"; message: string; answer: boolean };

/** A prompter that plays `script` in order and fails on any prompt it did not expect. */
function scriptedPrompter(script: Step[]) {
  const notes: string[] = [];
  const progress: string[] = [];
  const next = (kind: Step["kind"], message: string): Step => {
    const step = script.shift();
    if (!step) throw new Error(`unexpected ${kind} prompt after the script ended: ${message}`);
    if (step.kind !== kind || step.message !== message) throw new Error(`expected ${step.kind} "${step.message}", got ${kind} "${message}"`);
    return step;
  };
  const prompter: AcpGroupWizardPrompter = {
    note: async (message, title) => void notes.push(`${title ?? ""}: ${message}`),
    text: async (p) => {
      const step = next("text", p.message) as Extract<Step, { kind: "text" }>;
      if (step.initialValue !== undefined) expect(p.initialValue).toBe(step.initialValue);
      // The prompt's own check refuses a bad answer before the good one is given.
      if (step.rejects !== undefined) expect(p.validate?.(step.rejects)).toEqual(expect.any(String));
      expect(p.validate?.(step.answer)).toBeUndefined();
      return step.answer;
    },
    confirm: async (p) => (next("confirm", p.message) as Extract<Step, { kind: "confirm" }>).answer,
    progress: (label) => {
      progress.push(label);
      return { update: (m) => void progress.push(m), stop: (m) => void progress.push(m ?? "") };
    },
  };
  return { prompter, notes, progress, left: () => script.length };
}

let tmp: ReturnType<typeof tempDir>;
let net: LocalNetwork;
let server: GroupService;
const logger = createJsonLogger({ level: "error", write: () => {} });

beforeAll(async () => {
  tmp = tempDir("acp-wizard-");
  server = createGroupService({ domain: "acp.local", groups: { lobby: { name: "Lobby", members: { "alice.acp.local": { human: true } } } }, rateLimit: null });
  net = await startLocalNetwork({ domain: "acp.local", stateDir: join(tmp.dir, "net"), tls: true, serviceAgents: [server] });
});
afterAll(async () => {
  await net?.close();
  tmp?.cleanup();
});

describe("the guided setup (setupWizard.configure with the host's prompter)", () => {
  it("asks every field, creates the identity, joins by link and returns channels.acp-group", async () => {
    const stateDir = join(tmp.dir, "state-1");
    const wizard = createAcpGroupSetupWizard({ defaultStateDir: () => stateDir, env: {}, logger });
    const run = scriptedPrompter([
      { kind: "text", message: "Account id (a short name for this identity in the config)", initialValue: "default", answer: "bot", rejects: "no spaces" },
      { kind: "text", message: "Agent id on the ACP network", answer: "bot.acp.local", rejects: "bot" },
      { kind: "text", message: "Access point URL", initialValue: "https://acp3.acp.local", answer: net.localUrl, rejects: "acp3.acp.local" },
      { kind: "text", message: "CA certificate to trust (a private network's ca.crt; empty for the public CAs)", initialValue: "", answer: net.caFile },
      { kind: "text", message: "Your own aid (the owner: always allowed, never held to a share; empty for none)", initialValue: "", answer: "alice.acp.local" },
      { kind: "confirm", message: "ACP_SEED_PASSWORD is not set: store the new key without a password?", answer: true },
      { kind: "text", message: "Invite links to join (comma-separated; empty for none)", initialValue: "", answer: server.joinLink("lobby") },
      { kind: "text", message: "Other groups to answer in, by id (comma-separated; joined links are added)", initialValue: "", answer: "lab" },
    ]);
    const before = { gateway: { mode: "local" } };
    const result = await wizard.configure({ cfg: before, prompter: run.prompter });

    expect(run.left()).toBe(0);
    expect(result.accountId).toBe("bot");
    expect(result.cfg).toEqual({
      gateway: { mode: "local" },
      channels: {
        "acp-group": {
          stateDir,
          network: { caFile: net.caFile },
          identities: { bot: { aid: "bot.acp.local", owner: "alice.acp.local", accessPointUrl: net.localUrl } },
          groups: { lab: {}, lobby: {} },
        },
      },
    });
    const paths = identityPaths({ aid: "bot.acp.local", stateDir });
    expect([existsSync(paths.key), existsSync(paths.cert)]).toEqual([true, true]);
    expect(readFileSync(paths.key, "utf8")).toContain("BEGIN PRIVATE KEY");
    expect(server.members("lobby")).toContain("bot.acp.local");
    expect(run.progress).toEqual(["Setting up bot.acp.local", "bot.acp.local: identity ready, joined lobby"]);
    // The host's channel list shows it configured.
    await expect(wizard.getStatus({ cfg: result.cfg })).resolves.toMatchObject({ channel: "acp-group", configured: true, statusLines: ["ACP Group: bot.acp.local"] });
  });

  it("with ACP_SEED_PASSWORD set (in the env the host gives, not this process's), the new key is encrypted, nothing is asked about it, and the encrypted key joins by link", async () => {
    const stateDir = join(tmp.dir, "state-2");
    const wizard = createAcpGroupSetupWizard({ defaultStateDir: () => stateDir, env: { ACP_SEED_PASSWORD: "s3cret" }, logger });
    const run = scriptedPrompter([
      { kind: "text", message: "Agent id on the ACP network", answer: "enc.acp.local" },
      { kind: "text", message: "Access point URL", answer: net.localUrl },
      { kind: "text", message: "CA certificate to trust (a private network's ca.crt; empty for the public CAs)", answer: net.caFile },
      { kind: "text", message: "Your own aid (the owner: always allowed, never held to a share; empty for none)", answer: "" },
      { kind: "text", message: "Invite links to join (comma-separated; empty for none)", answer: server.joinLink("lobby") },
      { kind: "text", message: "Other groups to answer in, by id (comma-separated; joined links are added)", answer: "" },
    ]);
    expect(process.env.ACP_SEED_PASSWORD).toBeUndefined();
    // The account id comes from the host (`--account enc`), so it is not asked.
    const result = await wizard.configure({ cfg: {}, prompter: run.prompter, accountOverrides: { "acp-group": "enc" } });
    expect(run.left()).toBe(0);
    expect(run.notes).toEqual([`Identity: A new key for enc.acp.local in ${stateDir}, encrypted with the seed password (ACP_SEED_PASSWORD or network.seedPassword).`]);
    expect(readFileSync(identityPaths({ aid: "enc.acp.local", stateDir }).key, "utf8")).toContain("BEGIN ENCRYPTED PRIVATE KEY");
    expect(server.members("lobby")).toContain("enc.acp.local");
    expect((result.cfg as { channels: Record<string, { identities: object; groups: object }> }).channels["acp-group"]).toMatchObject({ identities: { enc: { aid: "enc.acp.local" } }, groups: { lobby: {} } });
  });

  it("declining a key without password writes nothing and says what to set", async () => {
    const stateDir = join(tmp.dir, "state-3");
    const wizard = createAcpGroupSetupWizard({ defaultStateDir: () => stateDir, env: {}, logger });
    const run = scriptedPrompter([
      { kind: "text", message: "Agent id on the ACP network", answer: "nope.acp.local" },
      { kind: "text", message: "Access point URL", answer: net.localUrl },
      { kind: "text", message: "CA certificate to trust (a private network's ca.crt; empty for the public CAs)", answer: net.caFile },
      { kind: "text", message: "Your own aid (the owner: always allowed, never held to a share; empty for none)", answer: "" },
      { kind: "confirm", message: "ACP_SEED_PASSWORD is not set: store the new key without a password?", answer: false },
    ]);
    const before = { gateway: { mode: "local" } };
    const result = await wizard.configure({ cfg: before, prompter: run.prompter, accountOverrides: { "acp-group": "nope" } });
    expect(run.left()).toBe(0);
    expect(result.cfg).toBe(before);
    expect(existsSync(identityPaths({ aid: "nope.acp.local", stateDir }).dir)).toBe(false);
    expect(run.notes).toEqual(["Nothing written: Set ACP_SEED_PASSWORD (or network.seedPassword as a secret reference) for this command and the gateway, then run the setup again."]);
  });
});
