// npm run build (and prepack): src/ → dist/ with TypeScript's own compiler (tsconfig.build.json:
// JavaScript + .d.ts, relative `.ts` imports rewritten to `.js`). dist/ is emptied first so a
// deleted source file leaves nothing behind in the package. Then a check: no emitted JavaScript
// may still import a `.ts` file (Node refuses to strip types under node_modules).
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(repo, "dist");
rmSync(dist, { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const res = spawnSync(process.execPath, [tsc, "-p", join(repo, "tsconfig.build.json")], { stdio: "inherit" });
if (res.status !== 0) {
  console.error(`build: tsc failed (exit ${res.status ?? res.signal})`);
  process.exit(1);
}

// Plain assets beside the sources (the HTML report's page script) are read at run time relative
// to their module, so they go to the same place under dist/.
const src = join(repo, "src");
const assets = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js"));
for (const a of assets) {
  mkdirSync(dirname(join(dist, a)), { recursive: true });
  copyFileSync(join(src, a), join(dist, a));
}

const tsImport = /(?:from\s*|import\s*\(\s*)["'](\.{1,2}\/[^"']*\.[cm]?ts)["']/;
const files = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js") && !assets.includes(f));
const bad = files.filter((f) => tsImport.test(readFileSync(join(dist, f), "utf8")));
if (bad.length > 0) {
  console.error(`build: emitted JavaScript still imports .ts files: ${bad.join(", ")}`);
  process.exit(1);
}
chmodSync(join(dist, "cli", "bin.js"), 0o755);
console.error(`build: ${files.length} modules in dist/`);
