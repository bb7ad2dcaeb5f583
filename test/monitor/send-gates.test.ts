import { beforeAll, describe, expect, it } from "vitest";
import { initDedup } from "../../src/monitor/dedup.ts";
import { checkOthersDuplicate, classifySendError } from "../../src/monitor/send-gates.ts";
import { TransportError } from "../../src/transport/errors.ts";
import { msg } from "./helpers.ts";

beforeAll(async () => {
  await initDedup();
});

describe("classifySendError", () => {
  it("never left / may have reached the server / refused", () => {
    expect(classifySendError(new TransportError("NOT_CONNECTED", "x"))).toBe("not-sent");
    expect(classifySendError(new TransportError("CONNECTION_LOST", "x"))).toBe("maybe-sent");
    expect(classifySendError(new TransportError("REQUEST_TIMEOUT", "x"))).toBe("maybe-sent");
    expect(classifySendError(new TransportError("RATE_LIMITED", "x"))).toBe("failed");
    expect(classifySendError(new Error("boom"))).toBe("failed");
    expect(classifySendError(null)).toBe("failed");
  });
});

describe("checkOthersDuplicate", () => {
  const recent = [
    msg("1", "bob.agentcp.io", "anyone know why CI is red?", 1),
    msg("2", "helper.agentcp.io", "CI is red because the lockfile is stale; run npm install.", 2),
    msg("3", "alice.agentcp.io", "CI is red because the lockfile is stale; run npm install.", 3),
  ];

  it("finds the same words from another member, by hash or by similarity", () => {
    expect(checkOthersDuplicate({ text: "ci is red because the lockfile is stale — run npm install!", recent, threshold: 0.8, selfAid: "alice.agentcp.io" })).toEqual({
      duplicate: true,
      reason: "same-hash",
      similarity: 1,
      sender: "helper.agentcp.io",
      msgId: "2",
    });
    const near = checkOthersDuplicate({ text: "CI is red because the lockfile is stale; run npm install again.", recent, threshold: 0.8, selfAid: "alice.agentcp.io" });
    expect(near).toMatchObject({ duplicate: true, reason: "near-duplicate", sender: "helper.agentcp.io" });
  });

  it("ignores our own lines and different answers", () => {
    const mine = [recent[2]!];
    expect(checkOthersDuplicate({ text: recent[2]!.content, recent: mine, threshold: 0.8, selfAid: "alice.agentcp.io" })).toEqual({ duplicate: false });
    expect(checkOthersDuplicate({ text: "Try clearing the cache first.", recent, threshold: 0.8, selfAid: "alice.agentcp.io" })).toEqual({ duplicate: false });
  });
});
