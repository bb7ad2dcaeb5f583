// The guided setup (`openclaw channels add` on a terminal without flags, `openclaw onboard`): the
// same fields as the `channels add` flags, asked one by one through the host's prompter, then the
// same steps (src/openclaw/setup.ts): the identity created or reused in the `acp-group id`
// layout, every invite link joined, `channels.acp-group` written. Host-agnostic: the prompter is
// the slice of the host's WizardPrompter used here.
import { existsSync } from "node:fs";
import { resolveSeedPassword } from "../config/secret-ref.ts";
import { accessPointUrlFor } from "../network/access-point.ts";
import { identityPaths } from "../network/identity-store.ts";
import type { Logger } from "../types.ts";
import { ACP_GROUP_CHANNEL_ID } from "./host-calls.ts";
import { applyAcpGroupSetup, prepareAcpGroupSetup, validateAcpGroupSetup, type AcpGroupSetupInput } from "./setup.ts";

export type AcpGroupWizardPrompter = {
  note: (message: string, title?: string) => Promise<void>;
  text: (params: { message: string; initialValue?: string; placeholder?: string; validate?: (value: string) => string | undefined }) => Promise<string>;
  confirm: (params: { message: string; initialValue?: boolean }) => Promise<boolean>;
  progress: (label: string) => { update: (message: string) => void; stop: (message?: string) => void };
};

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);
const sectionOf = (cfg: unknown): Plain => {
  const channels = isPlain(cfg) ? cfg.channels : undefined;
  const s = isPlain(channels) ? channels[ACP_GROUP_CHANNEL_ID] : undefined;
  return isPlain(s) ? s : {};
};
const identitiesOf = (cfg: unknown): Record<string, Plain> => {
  const ids = sectionOf(cfg).identities;
  return isPlain(ids) ? (Object.fromEntries(Object.entries(ids).filter(([, v]) => isPlain(v))) as Record<string, Plain>) : {};
};
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const list = (answer: string): string[] =>
  answer
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

const AID = /^[a-z0-9][a-z0-9_-]*(\.[a-z0-9-]+)+$/i;
const ACCOUNT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

export function createAcpGroupSetupWizard(deps: { defaultStateDir: () => string; env?: NodeJS.ProcessEnv; logger: Logger }) {
  const channel = ACP_GROUP_CHANNEL_ID;
  return {
    channel,
    /** What the channel list shows before one is picked. */
    getStatus: async (ctx: { cfg: unknown }) => {
      const ids = Object.values(identitiesOf(ctx.cfg))
        .map((i) => str(i.aid))
        .filter((a): a is string => a !== undefined);
      return {
        channel,
        configured: ids.length > 0,
        statusLines: [ids.length > 0 ? `ACP Group: ${ids.join(", ")}` : "ACP Group: no identity yet"],
        selectionHint: ids.length > 0 ? "configured" : "an agent id on the ACP network",
      };
    },
    /** Asks, creates the identity, joins, and returns the config to write. */
    configure: async <Cfg>(ctx: { cfg: Cfg; prompter: AcpGroupWizardPrompter; accountOverrides?: Partial<Record<string, string>> }): Promise<{ cfg: Cfg; accountId: string }> => {
      const { prompter } = ctx;
      const env = deps.env ?? process.env;
      const existing = identitiesOf(ctx.cfg);
      const section = sectionOf(ctx.cfg);
      const accountId =
        ctx.accountOverrides?.[channel] ??
        (await prompter.text({
          message: "Account id (a short name for this identity in the config)",
          initialValue: Object.keys(existing)[0] ?? "default",
          validate: (v) => (ACCOUNT_ID.test(v.trim()) ? undefined : "letters, digits, - and _"),
        })).trim();
      const previous = existing[accountId] ?? {};
      const aid = (await prompter.text({
        message: "Agent id on the ACP network",
        placeholder: "bot.agentcp.io",
        ...(str(previous.aid) ? { initialValue: str(previous.aid)! } : {}),
        validate: (v) => (AID.test(v.trim()) ? undefined : "expected <name>.<domain>, e.g. bot.agentcp.io"),
      })).trim();
      const accessPointUrl = (await prompter.text({
        message: "Access point URL",
        initialValue: str(previous.accessPointUrl) ?? accessPointUrlFor({ aid }),
        validate: (v) => (/^https?:\/\/\S+$/.test(v.trim()) ? undefined : "expected an http:// or https:// URL"),
      })).trim();
      const network = isPlain(section.network) ? section.network : {};
      const caFile = (await prompter.text({
        message: "CA certificate to trust (a private network's ca.crt; empty for the public CAs)",
        initialValue: str(network.caFile) ?? "",
      })).trim();
      const owner = (await prompter.text({
        message: "Your own aid (the owner: always allowed, never held to a share; empty for none)",
        initialValue: str(previous.owner) ?? "",
        validate: (v) => (v.trim() === "" || AID.test(v.trim()) ? undefined : "expected <name>.<domain>"),
      })).trim();
      const stateDir = str(section.stateDir) ?? deps.defaultStateDir();
      let unencryptedKey = false;
      if (!existsSync(identityPaths({ aid, stateDir }).cert)) {
        // A new key: encrypted with the password the gateway will have, or explicitly not at all.
        let password: string | undefined;
        try {
          password = resolveSeedPassword({ seedPassword: network.seedPassword as never }, env);
        } catch {
          password = undefined;
        }
        if (password) await prompter.note(`A new key for ${aid} in ${stateDir}, encrypted with the seed password (ACP_SEED_PASSWORD or network.seedPassword).`, "Identity");
        else {
          unencryptedKey = await prompter.confirm({ message: "ACP_SEED_PASSWORD is not set: store the new key without a password?", initialValue: false });
          if (!unencryptedKey) {
            await prompter.note("Set ACP_SEED_PASSWORD (or network.seedPassword as a secret reference) for this command and the gateway, then run the setup again.", "Nothing written");
            return { cfg: ctx.cfg, accountId };
          }
        }
      }
      const join = list(await prompter.text({ message: "Invite links to join (comma-separated; empty for none)", initialValue: "" }));
      const knownGroups = isPlain(section.groups) ? Object.keys(section.groups).filter((g) => g !== "*") : [];
      const groups = list(
        await prompter.text({
          message: "Other groups to answer in, by id (comma-separated; joined links are added)",
          initialValue: knownGroups.join(", "),
          validate: (v) => (list(v).length > 0 || join.length > 0 ? undefined : "name at least one group, or give an invite link above"),
        }),
      );
      const input: AcpGroupSetupInput = {
        aid,
        ...(accessPointUrl !== accessPointUrlFor({ aid }) ? { accessPointUrl } : {}),
        ...(caFile ? { caFile } : {}),
        ...(owner ? { owner } : {}),
        join,
        groups,
        unencryptedKey,
      };
      const invalid = validateAcpGroupSetup(input, ctx.cfg, accountId);
      if (invalid) throw new Error(invalid);
      const progress = prompter.progress(`Setting up ${aid}`);
      let prepared: AcpGroupSetupInput;
      try {
        prepared = await prepareAcpGroupSetup({ cfg: ctx.cfg, accountId, input, defaultStateDir: stateDir, env, logger: deps.logger });
      } catch (err) {
        progress.stop(`${aid}: not set up`);
        throw err;
      }
      progress.stop(`${aid}: identity ready${join.length > 0 ? `, joined ${prepared.groups?.filter((g) => !groups.includes(g)).join(", ") || "the groups"}` : ""}`);
      return { cfg: applyAcpGroupSetup({ cfg: ctx.cfg, accountId, input: prepared }), accountId };
    },
  };
}
