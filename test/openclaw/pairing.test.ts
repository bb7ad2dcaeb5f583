// The host's pairing as our direct conversations ask it (src/openclaw/pairing.ts): the reply in one
// line, allow-from entries read as aids, and a pairing store that fails never lets a stranger in.
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { parseAcpGroupTarget } from "../../src/openclaw/host-calls.ts";
import { createHostDirectPairing, flattenPairingReply, normalizeAcpGroupAllowEntry, type OpenClawPairingRuntime } from "../../src/openclaw/pairing.ts";

// openclaw@2026.9.6 buildPairingReply, as it writes it (src/pairing/pairing-messages.ts).
const HOST_REPLY = ["OpenClaw: access not configured.", "", "Your ACP agent id: sam.agentcp.io", "Pairing code:", "```", "K7Q2MZ", "```", "", "Ask the bot owner to approve with:", "```", "openclaw pairing approve acp-group K7Q2MZ", "```"].join("\n");
const who = { identityId: "bot", aid: "bot.agentcp.io", peer: "Sam.agentcp.io" };

describe("the host's pairing for direct messages", () => {
  it("sends the host's pairing reply as one line, the code and the approve command intact", () => {
    expect(flattenPairingReply(HOST_REPLY)).toBe(
      "OpenClaw: access not configured. — Your ACP agent id: sam.agentcp.io — Pairing code: K7Q2MZ — Ask the bot owner to approve with: openclaw pairing approve acp-group K7Q2MZ",
    );
  });

  it("reads allow-from entries as aids, with or without the channel or user prefix, in any case", async () => {
    const store: string[] = ["acp-group:SAM.agentcp.io"];
    const runtime = { readAllowFromStore: async () => store } as unknown as OpenClawPairingRuntime;
    const pairing = createHostDirectPairing({ runtime: () => runtime, logger: createMemoryLogger() });
    expect(await pairing.isApproved(who)).toBe(true);
    expect(await pairing.isApproved({ ...who, peer: "samuel.agentcp.io" })).toBe(false);
    expect(["user:a.b.io", " A.B.io ", "acp-group:user:a.b.io"].map(normalizeAcpGroupAllowEntry)).toEqual(["a.b.io", "a.b.io", "a.b.io"]);
  });

  it("one reply per code: a request still pending sends nothing", async () => {
    const upserts: unknown[] = [];
    let created = true;
    const runtime: OpenClawPairingRuntime = {
      buildPairingReply: () => HOST_REPLY,
      readAllowFromStore: async () => [],
      upsertPairingRequest: async (p) => {
        upserts.push(p);
        return { code: "K7Q2MZ", created };
      },
    };
    const pairing = createHostDirectPairing({ runtime: () => runtime, logger: createMemoryLogger() });
    expect((await pairing.request({ ...who, now: 0 })).reply).toContain("Pairing code: K7Q2MZ");
    created = false;
    expect(await pairing.request({ ...who, now: 1 })).toEqual({});
    expect(upserts[0]).toEqual({ channel: "acp-group", id: "Sam.agentcp.io", accountId: "bot", meta: { identity: "bot.agentcp.io" } });
  });

  it("a failing store, or none at all, admits nobody and sends nothing; the log says why", async () => {
    const logger = createMemoryLogger();
    const broken: OpenClawPairingRuntime = {
      buildPairingReply: () => HOST_REPLY,
      readAllowFromStore: async () => Promise.reject(new Error("database is locked")),
      upsertPairingRequest: async () => Promise.reject(new Error("database is locked")),
    };
    const pairing = createHostDirectPairing({ runtime: () => broken, logger });
    expect(await pairing.isApproved(who)).toBe(false);
    expect(await pairing.request({ ...who, now: 0 })).toEqual({});
    const missing = createHostDirectPairing({ runtime: () => undefined, logger });
    expect(await missing.isApproved(who)).toBe(false);
    expect(await missing.request({ ...who, now: 0 })).toEqual({});
    expect(logger.entries.map((e) => e.event)).toEqual(["openclaw.pairing-read-failed", "openclaw.pairing-request-failed", "openclaw.pairing-read-failed", "openclaw.pairing-request-failed"]);
  });

  it("reads the host's targets: a group, or an agent id", () => {
    expect(["acp-group:group:room-1", "group:room-1", "room-1", "acp-group:room-1"].map((t) => parseAcpGroupTarget(t))).toEqual(Array(4).fill({ kind: "group", groupId: "room-1" }));
    expect(["acp-group:alice.agentcp.io", "user:alice.agentcp.io", "dm:alice.agentcp.io", "alice.agentcp.io"].map((t) => parseAcpGroupTarget(t))).toEqual(Array(4).fill({ kind: "direct", peer: "alice.agentcp.io" }));
    expect(parseAcpGroupTarget("group:alice.agentcp.io")).toEqual({ kind: "group", groupId: "alice.agentcp.io" });
    expect(["", "acp-group:", "user:", "user:room-1", "group:a b"].map((t) => parseAcpGroupTarget(t))).toEqual(Array(5).fill(undefined));
  });
});
