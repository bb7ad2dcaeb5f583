#!/usr/bin/env node
// The command in a checkout (`npm start`, `npm run acp-group -- <command>`): the TypeScript sources
// run directly by Node >= 24 (type stripping); `npm install` provisions that Node inside the project
// (the pinned `node` dev dependency). The installed package's command is dist/cli/bin.js (src/cli/bin.ts).
const [major] = process.versions.node.split(".").map(Number);
if (major < 24) {
  process.stderr.write(
    `acp-group needs Node >= 24.16 in a checkout (this is ${process.version}). Run it through npm (npm start, npm run acp-group) ` +
      "so the project's own Node from `npm install` is used.\n",
  );
  process.exit(1);
}
process.removeAllListeners("warning");
process.on("warning", (w) => {
  if (w.name !== "ExperimentalWarning") process.stderr.write(`${w.name}: ${w.message}\n`);
});
const { main, quietOnClosedPipe } = await import("../src/cli/index.ts");
quietOnClosedPipe();
process.exitCode = await main(process.argv.slice(2));
