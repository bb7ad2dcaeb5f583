// `acp-group pairing approve|list|revoke`: the owner's side of `dmPolicy: "pairing"` standalone.
// An unknown sender who writes to the agent gets a one-line code; the owner approves the code here
// and the sender is answered from their next message on — the running agent reads the approvals
// from the state directory, no restart. Inside OpenClaw the host's `openclaw pairing` does this.
import { loadConfigFile, parseChannelConfig } from "../config/load.ts";
import { defaultStateDir } from "../state/file-store.ts";
import { createPairingStore, PAIRING_CODE_TTL_MS } from "../state/pairing-store.ts";
import { join } from "node:path";
import { parse, UsageError, type CommandSpec, type Io } from "./args.ts";

const OPTIONS = {
  identity: { type: "string" },
  "state-dir": { type: "string" },
  config: { type: "string" },
} as const;

export const pairingSpec: CommandSpec = {
  name: "pairing",
  summary: "Approve who may message an agent directly (dmPolicy pairing, standalone)",
  usage: "approve <code> | list | revoke <aid>  --identity AID [--state-dir DIR] [--config FILE]",
  help: [
    "Under `dmPolicy: \"pairing\"` a sender no list admits gets one line with a pairing code (good for an hour)",
    "and nothing from the model. `approve <code>` lets that sender talk to the agent from their next message on",
    "(the running agent reads it at once); `list` shows the waiting codes and who is approved; `revoke <aid>`",
    "takes an approved sender off the list. The files live in <stateDir>/pairing (0600).",
    "",
    "  --identity AID     the agent: its aid, or its identity id in --config",
    "  --state-dir DIR    the agent's state directory (default: stateDir of --config, ACP_GROUP_STATE_DIR, ~/.acp-group/state)",
  ].join("\n"),
  run: (args, io) => pairingCommand(args, io),
};

export async function pairingCommand(args: string[], io: Io, now: () => number = Date.now): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS, true);
  const [action, arg, ...extra] = positionals;
  if (!values.identity) throw new UsageError("expected `--identity AID` (the agent whose direct messages are paired)");
  const config = values.config ? loadConfigFile(values.config) : parseChannelConfig({});
  const aid = config.identities[values.identity]?.aid ?? values.identity;
  if (!aid.includes(".")) throw new UsageError(`expected an aid such as ${aid}.agentcp.io, or an identity of --config (have: ${Object.keys(config.identities).join(", ") || "none"})`);
  const stateDir = values["state-dir"] ?? config.stateDir ?? defaultStateDir();
  const store = createPairingStore({ dir: join(stateDir, "pairing") });
  switch (action) {
    case "approve": {
      if (!arg || extra.length > 0) throw new UsageError("expected `pairing approve <code>`");
      const approved = store.approve({ aid, code: arg, now: now() });
      io.out(`approved: ${approved.peer} may now message ${aid} directly`);
      return 0;
    }
    case "revoke": {
      if (!arg || extra.length > 0) throw new UsageError("expected `pairing revoke <aid>`");
      const revoked = store.revoke({ aid, peer: arg });
      io.out(revoked ? `revoked: ${arg} is no longer approved for ${aid}` : `${arg} was not approved for ${aid}`);
      return revoked ? 0 : 1;
    }
    case "list": {
      if (arg) throw new UsageError("expected `pairing list` with no argument");
      const { requests, approved } = store.list(aid, now());
      io.out(`${aid} · pairing in ${join(stateDir, "pairing")}`);
      io.out(requests.length === 0 ? "waiting: none" : "waiting:");
      for (const r of requests) io.out(`  ${r.code}  ${r.peer}  (expires in ${Math.max(1, Math.round((r.createdAt + PAIRING_CODE_TTL_MS - now()) / 60_000))} min)`);
      io.out(approved.length === 0 ? "approved: none" : "approved:");
      for (const a of approved) io.out(`  ${a.peer}  (since ${new Date(a.approvedAt).toISOString().slice(0, 16).replace("T", " ")})`);
      return 0;
    }
    default:
      throw new UsageError(`expected \`pairing approve <code>\`, \`pairing list\` or \`pairing revoke <aid>\`${action ? `, got \`${action}\`` : ""}`);
  }
}
