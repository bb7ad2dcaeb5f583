#!/usr/bin/env node
// The installed command, compiled to dist/cli/bin.js: package.json's `bin` (bin/acp-group.mjs) runs it
// where there is no src/ beside it; a checkout runs the TypeScript sources instead.
// Nothing is imported before the Node version check: on an old Node the modules themselves fail
// (`privateKey.toCryptoKey is not a function`) before any check inside them could speak.
const NODE_FLOOR = 22;
const [major] = process.versions.node.split(".").map(Number);
if (major === undefined || major < NODE_FLOOR) {
  process.stderr.write(`acp-group needs Node >= ${NODE_FLOOR} (this is v${process.versions.node}); install a newer Node and run it again.\n`);
  process.exit(1);
}

// A long-running command restarts itself here, once, with V8's helper threads sized to the machine.
(await import("./node-args.ts")).relaunchWithNodeArgs();

// Node prints an ExperimentalWarning for features some dependencies touch; the rest still shows.
process.removeAllListeners("warning");
process.on("warning", (w) => {
  if (w.name !== "ExperimentalWarning") process.stderr.write(`${w.name}: ${w.message}\n`);
});
const { main, quietOnClosedPipe } = await import("./index.ts");
quietOnClosedPipe();
process.exitCode = await main(process.argv.slice(2));

export {};
