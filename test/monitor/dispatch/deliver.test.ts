// The deliver step (src/monitor/dispatch/deliver.ts): what a failed send means, and what one
// delivery attempt hands back to the group client.
import { describe, expect, it } from "vitest";
import { classifySendError } from "../../../src/monitor/dispatch/deliver.ts";
import { TransportError } from "../../../src/transport/errors.ts";

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
