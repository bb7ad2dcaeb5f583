#!/usr/bin/env node
// The `acp-group` command (package.json `bin`), in a checkout and in the installed package alike.
// A checkout (src/ beside this folder) runs the TypeScript sources directly on Node >= 24 (type
// stripping): `npm install` provisions that Node inside the project (the pinned `node` dev
// dependency), and npm scripts, `npm run acp-group` and `npx acp-group` put it first on PATH. The
// installed package has no src/: it runs its compiled JavaScript, dist/cli/bin.js (compiled from
// src/cli/bin.ts), which checks its own Node floor.
import { existsSync } from "node:fs";

if (!existsSync(new URL("../src/cli/index.ts", import.meta.url))) {
  await import("../dist/cli/bin.js");
} else {
  const [major] = process.versions.node.split(".").map(Number);
  if (major < 24) {
    process.stderr.write(
      `acp-group needs Node >= 24.16 in a checkout (this is ${process.version}). Run it through npm (npx acp-group, npm start, npm run acp-group) ` +
        "so the project's own Node from `npm install` is used.\n",
    );
    process.exit(1);
  }
  // A long-running command restarts itself here, once, with V8's helper threads sized to the
  // machine (src/cli/node-args.ts); nothing has been read or started yet.
  (await import("../src/cli/node-args.ts")).relaunchWithNodeArgs();
  process.removeAllListeners("warning");
  process.on("warning", (w) => {
    if (w.name !== "ExperimentalWarning") process.stderr.write(`${w.name}: ${w.message}\n`);
  });
  const { main, quietOnClosedPipe } = await import("../src/cli/index.ts");
  quietOnClosedPipe();
  process.exitCode = await main(process.argv.slice(2));
}
