// The package as users get it. `npm pack` (prepack: npm run build) must ship only what users need,
// and the tarball, installed with `npm install <tarball>` into a fresh folder, must run from
// node_modules: the `acp-group` command, `start` on its bundled config, the library import and
// its types. Real npm, real Node, real files; the npm registry (or npm's cache) supplies the
// dependencies. Runs on the project's Node 24 and on every extra Node binary listed in
// ACP_TEST_NODES (colon-separated paths), e.g. a Node 22 to prove the engines floor.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFloor, ok, run } from "./run.ts";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const PKG = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  types: string;
  exports: Record<string, string | { types: string; default: string }>;
  engines: { node: string };
  dependencies: Record<string, string>;
  openclaw: { extensions: string[] };
};
/** Files besides dist/, config/ and docs/ (npm always adds package.json, README and LICENSE); bin/acp-group.mjs is the command, in a checkout and installed alike. */
const SHIPPED_TOP = ["CHANGELOG.md", "LICENSE", "README.md", "bin/acp-group.mjs", "openclaw.plugin.json", "package.json"];

type PackResult = { filename: string; entryCount: number; size: number; files: Array<{ path: string }> };
const parsePack = (stdout: string): PackResult => {
  const [result] = JSON.parse(stdout) as PackResult[];
  if (!result) throw new Error(`npm pack --json printed no result:\n${stdout}`);
  return result;
};

/** Plain JavaScript assets under src/ (read at run time beside their module), relative to src/. */
function sourceAssets(): string[] {
  return readdirSync(join(REPO, "src"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".js"))
    .map((f) => f.replaceAll("\\", "/"))
    .sort();
}

/** src/**\/*.ts (not .d.ts), relative to src/. */
function sourceModules(): string[] {
  return readdirSync(join(REPO, "src"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => f.replaceAll("\\", "/"))
    .sort();
}

const work = mkdtempSync(join(tmpdir(), "acp-package-"));
let dryRun: PackResult;
let tarball: string;
let dryPaths: string[];

beforeAll(async () => {
  // The dry run is what a publish would upload; its prepack builds dist/ from src/.
  dryRun = parsePack(ok("npm pack --dry-run", await run({ cmd: "npm", args: ["pack", "--dry-run", "--json"], cwd: REPO, timeoutMs: 150_000 })).stdout);
  dryPaths = dryRun.files.map((f) => f.path).sort();
  // The real tarball from that same build (no second prepack).
  const packDir = join(work, "pack");
  mkdirSync(packDir);
  const real = parsePack(
    ok("npm pack", await run({ cmd: "npm", args: ["pack", "--ignore-scripts", "--json", "--pack-destination", packDir], cwd: REPO, timeoutMs: 60_000 })).stdout,
  );
  tarball = join(packDir, real.filename);
  expect(real.files.map((f) => f.path).sort()).toEqual(dryPaths);
}, 240_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("npm pack: only what users need", () => {
  it("ships dist/, config/, docs/, the manifest, README, CHANGELOG, LICENSE and package.json — nothing else", () => {
    const outside = dryPaths.filter((p) => !p.startsWith("dist/") && !p.startsWith("docs/") && !/^config\/[^/]+\.json$/.test(p));
    expect(outside).toEqual(SHIPPED_TOP);
    expect(dryPaths).toContain("config/demo.json");
    // The README links into docs/: every page of it ships, and nothing else goes in there.
    const docs = readdirSync(join(REPO, "docs"), { recursive: true, encoding: "utf8" }).map((f) => f.replaceAll("\\", "/"));
    expect(dryPaths.filter((p) => p.startsWith("docs/"))).toEqual(docs.filter((f) => /\.(md|png)$/.test(f)).map((f) => `docs/${f}`).sort());
    expect(dryPaths.filter((p) => /^(src|test|scripts|bench|\.ci|node_modules|coverage)\//.test(p))).toEqual([]);
    expect(dryPaths.filter((p) => p.startsWith("bin/"))).toEqual(["bin/acp-group.mjs"]);
  });

  it("dist/ is exactly the compiled src/: one .js and one .d.ts per module, the page assets, no source maps, no TypeScript sources", () => {
    const expected = [
      ...sourceModules().flatMap((m) => [`dist/${m.replace(/\.ts$/, ".js")}`, `dist/${m.replace(/\.ts$/, ".d.ts")}`]),
      ...sourceAssets().map((a) => `dist/${a}`),
    ];
    expect(dryPaths.filter((p) => p.startsWith("dist/"))).toEqual(expected.sort());
    expect(dryPaths.filter((p) => p.endsWith(".map"))).toEqual([]);
  });

  it("every entry point in package.json is in the tarball", () => {
    const entries = [
      ...Object.values(PKG.bin),
      PKG.types,
      ...Object.values(PKG.exports).flatMap((e) => (typeof e === "string" ? [e] : [e.types, e.default])),
      ...PKG.openclaw.extensions,
    ].map((p) => p.replace(/^\.\//, ""));
    expect(entries).toEqual(expect.arrayContaining(["bin/acp-group.mjs", "dist/index.js", "dist/index.d.ts", "dist/plugin.js", "dist/plugin.d.ts"]));
    expect(entries.filter((p) => !dryPaths.includes(p))).toEqual([]);
    expect(PKG.openclaw.extensions).toEqual(["./dist/plugin.js"]);
  });
});

describe("installed from the tarball into a fresh folder", () => {
  const consumer = join(work, "consumer");
  const installed = join(consumer, "node_modules", PKG.name);
  const extraNodes = (process.env.ACP_TEST_NODES ?? "").split(delimiter).filter(Boolean);
  const nodes = [process.execPath, ...extraNodes];

  beforeAll(async () => {
    mkdirSync(consumer);
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    ok("npm install <tarball>", await run({ cmd: "npm", args: ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], cwd: consumer, timeoutMs: 120_000 }));
  }, 130_000);

  it("the OpenClaw host can require() the plugin's modules: no top-level await anywhere in their graph", async () => {
    // OpenClaw loads dist/plugin.js with require(), which refuses an ES module graph holding a
    // top-level await (ERR_REQUIRE_ASYNC_MODULE). plugin.js itself imports the host's SDK, absent
    // here, so each module it imports from the package is required instead, and the library face.
    const plugin = readFileSync(join(installed, "dist", "plugin.js"), "utf8");
    const own = [...plugin.matchAll(/from\s*["'](\.\/[^"']+\.js)["']/g)].map((m) => m[1]!);
    expect(own.length).toBeGreaterThan(3);
    const targets = [...new Set(["./index.js", ...own])].map((f) => join(installed, "dist", f));
    const script = `const { createRequire } = require("node:module"); const r = createRequire(process.cwd() + "/"); for (const f of ${JSON.stringify(targets)}) r(f); console.log("required", ${targets.length});`;
    const r = ok("node -e require", await run({ cmd: process.execPath, args: ["-e", script], cwd: consumer, node: process.execPath, timeoutMs: 60_000 }));
    expect(r.stdout.trim()).toBe(`required ${targets.length}`);
  }, 70_000);

  it("every relative link of the README and of the pages it links to resolves to a file inside the installed package", () => {
    // From the README, page to linked page: every target is a file of the package.
    const pages = ["README.md"];
    const broken: string[] = [];
    for (let i = 0; i < pages.length; i++) {
      const page = pages[i]!;
      for (const target of relativeLinks(readFileSync(join(installed, page), "utf8"))) {
        const file = resolve(installed, dirname(page), decodeURIComponent(target));
        const inside = relative(installed, file).replaceAll("\\", "/");
        if (inside.startsWith("../") || !existsSync(file)) broken.push(`${page} -> ${target}`);
        else if (inside.endsWith(".md") && !pages.includes(inside)) pages.push(inside);
      }
    }
    expect(broken).toEqual([]);
    // The walk is not vacuous: it read the README's docs pages and what they link to.
    expect(pages.filter((p) => p.startsWith("docs/")).length).toBeGreaterThan(5);
  });

  it("the emitted JavaScript imports no .ts file, and the command has a shebang", () => {
    const js = readdirSync(join(installed, "dist"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js"));
    expect(js.length).toBe(sourceModules().length + sourceAssets().length);
    const tsImports = js.filter((f) => /(?:from\s*|import\s*\(\s*)["']\.{1,2}\/[^"']*\.[cm]?ts["']/.test(readFileSync(join(installed, "dist", f), "utf8")));
    expect(tsImports).toEqual([]);
    expect(readFileSync(join(installed, "dist", "cli", "bin.js"), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    // The command: without src/ beside it (the installed package), it runs the compiled dist/cli/bin.js.
    expect(readFileSync(join(installed, "bin", "acp-group.mjs"), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect(existsSync(join(installed, "src"))).toBe(false);
  });

  it("engines.node is no lower than any runtime dependency's own engines floor", () => {
    const ours = nodeFloor(PKG.engines.node);
    // Where npm put each dependency: nested under the package, or hoisted beside it.
    const manifestOf = (dep: string) =>
      [join(installed, "node_modules", dep, "package.json"), join(consumer, "node_modules", dep, "package.json")].find((f) => existsSync(f)) ??
      `${dep}: not installed`;
    const floors = Object.keys(PKG.dependencies).map((dep) => {
      const pj = JSON.parse(readFileSync(manifestOf(dep), "utf8")) as { engines?: { node?: string } };
      return { dep, floor: pj.engines?.node ? nodeFloor(pj.engines.node) : 0 };
    });
    expect(floors.filter((f) => f.floor > ours)).toEqual([]);
  });

  it("its types compile in a strict consumer project (skipLibCheck off), the README's example too", async () => {
    writeFileSync(
      join(consumer, "check.ts"),
      [
        `import { createGroupAgent, parseChannelConfig, type ChannelConfig, type CreateGroupAgentParams, type RunningIdentity } from "${PKG.name}";`,
        `const params: CreateGroupAgentParams = { config: { identities: { a: { aid: "a.agentcp.io", name: "A" } } } };`,
        `const start: (p: CreateGroupAgentParams) => RunningIdentity = createGroupAgent;`,
        `const parsed: ChannelConfig = parseChannelConfig(params.config);`,
        `export { start, parsed };`,
      ].join("\n"),
    );
    writeFileSync(join(consumer, "readme.ts"), readmeLibraryExample());
    writeFileSync(
      join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2023",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ["node"],
          typeRoots: [join(REPO, "node_modules", "@types")],
        },
        files: ["check.ts", "readme.ts"],
      }),
    );
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    const r = await run({ cmd: process.execPath, args: [tsc, "-p", join(consumer, "tsconfig.json")], cwd: consumer, timeoutMs: 60_000 });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.code).toBe(0);
  }, 70_000);

  describe.each(nodes.map((node) => ({ node, version: readVersion(node) })))(
    "on Node $version",
    ({ node, version }) => {
      it("is a version package.json engines names", () => {
        expect(Number(version.slice(1).split(".")[0])).toBeGreaterThanOrEqual(nodeFloor(PKG.engines.node));
      });

      it("npx acp-group --help prints the usage", async () => {
        const r = ok("npx acp-group --help", await run({ cmd: "npx", args: ["--no-install", "acp-group", "--help"], cwd: consumer, node, timeoutMs: 60_000 }));
        expect(r.stdout).toMatch(/^Usage: acp-group <command> \[options\]/);
      }, 70_000);

      it("npx acp-group replay --html writes the report page (its script asset ships in dist/)", async () => {
        const log = join(work, `log-${version}.jsonl`);
        writeFileSync(log, [
          JSON.stringify({ id: "1", ts: 1_700_000_000_000, sender: "bob", content: "alice, are you there?" }),
          JSON.stringify({ id: "2", ts: 1_700_000_004_000, sender: "carol", content: "she is busy" }),
        ].join("\n"));
        const html = join(work, `report-${version}.html`);
        ok("npx acp-group replay --html", await run({ cmd: "npx", args: ["--no-install", "acp-group", "replay", log, "--persona", "alice", "--html", html], cwd: consumer, node, timeoutMs: 60_000 }));
        const page = readFileSync(html, "utf8");
        expect(page).toMatch(/^<!doctype html>/i);
        expect(page).toContain(readFileSync(join(REPO, "src", "report", "page-script.js"), "utf8").trim().slice(0, 200));
      }, 70_000);

      it("npx acp-group start runs the bundled demo config on its embedded server and saves state", async () => {
        const help = ok("start --help", await run({ cmd: "npx", args: ["--no-install", "acp-group", "start", "--help"], cwd: consumer, node, timeoutMs: 60_000 }));
        expect(help.stdout).toContain(`(default: ${join(installed, "config", "demo.json")})`);
        const stateDir = join(work, `state-${version}`);
        const r = ok(
          "npx acp-group start",
          await run({ cmd: "npx", args: ["--no-install", "acp-group", "start", "--duration-ms", "3000", "--no-stdin", "--state-dir", stateDir], cwd: consumer, node, timeoutMs: 60_000 }),
        );
        expect(r.stdout).toMatch(/^access point: http:\/\/127\.0\.0\.1:\d+$/m);
        expect(r.stdout).toMatch(/^join lobby: https:\/\/group\.acp\.local\/lobby\?code=\S+$/m);
        expect(r.stdout).toMatch(/^local network acp\.local · groups: lobby · state: /m);
        expect(r.stdout).toMatch(/^agents online: alice \(alice\.acp\.local\), bob \(bob\.acp\.local\), carol \(carol\.acp\.local\)$/m);
        expect(r.stdout).toMatch(/^stopped$/m);
        expect(readdirSync(stateDir)).toEqual(expect.arrayContaining(["alice", "bob", "carol"]));
      }, 130_000);

      it(`import("${PKG.name}") loads the compiled library from node_modules`, async () => {
        const script = `import(${JSON.stringify(PKG.name)}).then((m) => console.log(JSON.stringify({ createGroupAgent: typeof m.createGroupAgent, startIdentity: typeof m.startIdentity, at: import.meta.resolve(${JSON.stringify(PKG.name)}) })))`;
        const r = ok("node -e import", await run({ cmd: node, args: ["--input-type=module", "-e", script], cwd: consumer, node, timeoutMs: 60_000 }));
        const out = JSON.parse(r.stdout) as { createGroupAgent: string; startIdentity: string; at: string };
        expect(out).toEqual({ createGroupAgent: "function", startIdentity: "function", at: pathToFileURL(join(installed, "dist", "index.js")).href });
      }, 70_000);
    },
  );
});

/**
 * The relative targets of a Markdown page's links and images (`[text](target)`, `[label]: target`),
 * without their `#anchor`; absolute URLs, `mailto:` and links inside code are left out.
 */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
  const targets = [
    ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
    ...[...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!),
  ];
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith("#")).map((t) => t.replace(/[#?].*$/, ""));
}

function readVersion(node: string): string {
  const r = spawnSync(node, ["-v"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${node} -v failed (${r.error?.message ?? r.stderr})`);
  return r.stdout.trim();
}

/** The TypeScript block of the README's "Use as a library" section. */
function readmeLibraryExample(): string {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("\n## Use as a library\n"));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block || !block.includes(`from "${PKG.name}"`)) throw new Error(`README.md: no \`\`\`ts example importing ${PKG.name} under "## Use as a library"`);
  return block;
}
