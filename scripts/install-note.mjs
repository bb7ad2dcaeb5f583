// `npm install` in a checkout runs this last (package.json `prepare`; never for users of the
// package). npm itself may run on an older Node than the project: on Node 20 it warns EBADENGINE
// for the dependencies that ask for Node >= 22. Those warnings are about npm's Node, not the one
// the project runs on — say so in one line. Silent when npm runs on Node >= 22 (no warnings then).
// Plain JavaScript on purpose: it must run on whatever Node npm found.
import { readFileSync } from "node:fs";

const npmNode = /\bnode\/(v(\d+)\.[\d.]+)/.exec(process.env.npm_config_user_agent ?? "");
if (npmNode && Number(npmNode[2]) < 22) {
  let own = "24";
  try {
    own = JSON.parse(readFileSync(new URL("../node_modules/node/package.json", import.meta.url), "utf8")).version;
  } catch {
    // the project's Node is not installed (yet): name the major version only
  }
  process.stderr.write(
    `\nacp-group-channel: the EBADENGINE warnings above are harmless. npm itself runs on Node ${npmNode[1]}; ` +
      `the project runs on its own Node ${own}, which this install put in node_modules, and every npm script and npx acp-group use it. Nothing to do.\n\n`,
  );
}
