// The package root is the surface a library user needs (README "Use as a library"): run an
// identity, read its configuration, pick a back-end, and the errors they throw. The engine's parts
// (group client, monitor, transport, network, local server) are not part of it: a change here is a
// change of the public API, listed in CHANGELOG.md.
import { describe, expect, it } from "vitest";
import * as root from "../src/index.ts";

describe("the package root", () => {
  it("exports exactly the library surface", () => {
    expect(Object.keys(root).sort()).toEqual([
      "ConfigError",
      "LlmError",
      "NetworkError",
      "RuntimeError",
      "createGroupAgent",
      "createOpenAIBackend",
      "createScriptedBackend",
      "loadConfigFile",
      "parseChannelConfig",
      "startIdentity",
    ]);
  });

  it("createGroupAgent refuses a config without identities, naming the path", () => {
    expect(() => root.createGroupAgent({ config: { identities: {} } })).toThrow(/identities/);
  });
});
