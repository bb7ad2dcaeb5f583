// `npm run docs`: regenerates every generated block of README.md and docs/*.md, and
// docs/replay-report.png, from today's code.
//   npm run docs               rewrite every block (deterministic and live) and the screenshot
//   npm run docs -- --check    exit 1 when a deterministic block differs from the committed text
// Deterministic blocks (config reference, CLI help, replay output of the bundled logs, log events)
// are also held by test/docs/generated.test.ts. Live blocks run the commands for real — the demo on
// an embedded local network, the local network's banner — and the screenshot renders
// `replay --html` in headless Chromium; ports, times and invite codes differ on every run, so no
// test compares them. Benchmark figures (docs/benchmarks.md) are measured by hand, with their date.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { blocksOf, cli, docFiles, isDeterministic, renderDeterministic, REPO, rewrite } from "./blocks.ts";

const NODE = process.execPath;
const BIN = join(REPO, "bin/acp-group.mjs");
const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOT = "docs/replay-report.png";

/** Runs `acp-group <argv>` in a child process (it serves sockets and reads no stdin) and returns its stdout. */
function child(argv: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(NODE, [BIN, ...argv], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, OPENAI_API_KEY: "", OPENAI_BASE_URL: "" } });
    let out = "";
    let err = "";
    p.stdout.on("data", (d: Buffer) => (out += d.toString()));
    p.stderr.on("data", (d: Buffer) => (err += d.toString()));
    p.on("error", reject);
    p.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`acp-group ${argv.join(" ")} exited ${code}: ${err}`))));
  });
}

const fence = (text: string) => `\`\`\`text\n${text.trimEnd()}\n\`\`\`\n`;

/** Live generators: real sockets and real time; rewritten by `npm run docs`, never compared by a test. */
const LIVE: Record<string, () => Promise<string>> = {
  "demo-transcript": async () => {
    const args = ["--fresh", "--say", "Alice, can you hear me?", "--no-stdin", "--duration-ms", "8000"];
    const out = await child(["start", ...args]);
    return fence(`$ npm start -- ${args.map((a) => (a.includes(" ") ? `"${a}"` : a)).join(" ")}\n${out}`);
  },
  "server-banner": async () => {
    const state = mkdtempSync(join(tmpdir(), "acp-group-docs-"));
    try {
      const out = await child(["server", "--tls", "--domain", "acp.local", "--state-dir", state, "--duration-ms", "1500"]);
      // The banner up to the first line of the run itself; the throwaway state folder is shown as the default one.
      return fence(`$ npx acp-group server --tls --domain acp.local\n${out.split(state).join("~/.acp-group/state")}`);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  },
};

/** `replay --html` of the bundled #ubuntu day, rendered by headless Chromium into docs/replay-report.png. */
async function screenshot(): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (the screenshot needs it)`);
  const { chromium } = await import("playwright-core");
  const dir = mkdtempSync(join(tmpdir(), "acp-group-docs-"));
  try {
    const page = join(dir, "report.html");
    await cli(["replay", "test/fixtures/irc-dev/ubuntu-2010-08-17.jsonl", "--persona", "jacob_", "--alias", "jacob", "--responder", "mention", "--html", page]);
    const browser = await chromium.launchPersistentContext(join(dir, "profile"), {
      executablePath: CHROMIUM,
      viewport: { width: 1200, height: 760 },
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    try {
      const tab = await browser.newPage();
      await tab.goto(pathToFileURL(page).href);
      await tab.screenshot({ path: join(REPO, SCREENSHOT) });
    } finally {
      await browser.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const check = process.argv.includes("--check");
  const stale: string[] = [];
  for (const file of docFiles()) {
    const path = join(REPO, file);
    const before = readFileSync(path, "utf8");
    for (const b of blocksOf(file, before)) {
      if (!isDeterministic(b.name) && !(b.name in LIVE)) throw new Error(`${file}: no generator for block \`${b.name}\``);
    }
    const after = await rewrite(before, async (name) => (await renderDeterministic(name)) ?? (check ? undefined : LIVE[name]?.()));
    if (after === before) continue;
    if (check) stale.push(file);
    else {
      writeFileSync(path, after);
      console.log(`rewrote ${file}`);
    }
  }
  if (check) {
    if (stale.length > 0) {
      console.error(`stale generated blocks in ${stale.join(", ")}: run npm run docs`);
      return 1;
    }
    console.log("generated blocks are current");
    return 0;
  }
  await screenshot();
  console.log(`wrote ${SCREENSHOT}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main();
}
