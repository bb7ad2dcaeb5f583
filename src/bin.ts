#!/usr/bin/env node
// The installed command (package.json `bin` → dist/bin.js, compiled from this file). A checkout
// runs the TypeScript through bin/acp-group.mjs instead (`npm start`, `npm run acp-group`).
import { main } from "./cli.ts";

// Node prints an ExperimentalWarning for features some dependencies touch; the rest still shows.
process.removeAllListeners("warning");
process.on("warning", (w) => {
  if (w.name !== "ExperimentalWarning") process.stderr.write(`${w.name}: ${w.message}\n`);
});
process.exitCode = await main(process.argv.slice(2));
