// `npm install` on a Node older than the project's (npm on Node 20 warns EBADENGINE for the
// dependencies that want Node >= 22): the checkout's `prepare` script says why that is harmless.
// The script runs as npm runs it (npm_config_user_agent names npm's Node); real npm on Node 20 is
// exercised by the fresh-clone run in the README's set-up, not here.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string>; devEngines?: unknown; engines: { node: string } };
const note = (userAgent: string) =>
  spawnSync(process.execPath, [join(ROOT, "scripts", "install-note.mjs")], { cwd: ROOT, encoding: "utf8", env: { ...process.env, npm_config_user_agent: userAgent } });

describe("npm install on an older Node", () => {
  it("runs the note after every install in a checkout (prepare), never in a user's install (no postinstall)", () => {
    expect(PKG.scripts.prepare).toBe("node scripts/install-note.mjs");
    expect(PKG.scripts.postinstall).toBeUndefined();
    expect(PKG.scripts.preinstall).toBeUndefined();
  });

  it("the checkout's own engines warning is not raised: npm on Node 20 is enough to develop (devEngines)", () => {
    expect(PKG.devEngines).toEqual({ runtime: { name: "node", version: ">=20", onFail: "warn" } });
    expect(PKG.engines.node).toBe(">=22");
  });

  it("npm on Node 20: one paragraph on stderr says the EBADENGINE warnings are harmless and why", () => {
    const r = note("npm/11.19.1 node/v20.20.2 linux x64 workspaces/false");
    const own = (JSON.parse(readFileSync(join(ROOT, "node_modules", "node", "package.json"), "utf8")) as { version: string }).version;
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe(
      `acp-group-channel: the EBADENGINE warnings above are harmless. npm itself runs on Node v20.20.2; the project runs on its own Node ${own}, which this install put in node_modules, and every npm script and npx acp-group use it. Nothing to do.`,
    );
  });

  it("npm on Node 22 or later (no warnings then): silent", () => {
    for (const ua of ["npm/11.19.1 node/v22.12.0 linux x64 workspaces/false", "npm/11.19.1 node/v24.21.0 linux x64 workspaces/false", ""]) {
      const r = note(ua);
      expect([r.status, r.stdout, r.stderr]).toEqual([0, "", ""]);
    }
  });
});
