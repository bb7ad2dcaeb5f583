// The channel's secret contract, which the OpenClaw host looks up as `dist/secret-contract-api.js`
// in the installed package: which config paths may hold a host secret reference, and how to
// collect them. The gateway then resolves `channels.acp-group.network.seedPassword` through its own
// `secrets.providers` (env, file, exec, store) before the channel starts, and the plugin receives
// the text. Outside the host, src/config/secret-ref.ts resolves env and file references itself.
import { collectSecretInputAssignment, createChannelSecretTargetRegistryEntries, getChannelRecord, type ResolverContext, type SecretDefaults } from "openclaw/plugin-sdk/channel-secret-basic-runtime";

const CHANNEL = "acp-group";
const SEED_PASSWORD_PATH = `channels.${CHANNEL}.network.seedPassword`;

/** `openclaw secrets configure | apply | audit` list this path as one of ours. */
export const secretTargetRegistryEntries = createChannelSecretTargetRegistryEntries({ channelKey: CHANNEL, channel: ["network.seedPassword"] });

/** Called by the gateway while it prepares its runtime config: our references to resolve. */
export function collectRuntimeConfigAssignments(params: { config: { channels?: Record<string, unknown> }; defaults: SecretDefaults | undefined; context: ResolverContext }): void {
  const channel = getChannelRecord(params.config, CHANNEL);
  const network = channel?.network;
  if (!channel || typeof network !== "object" || network === null || Array.isArray(network)) return;
  const net = network as Record<string, unknown>;
  collectSecretInputAssignment({
    value: net.seedPassword,
    path: SEED_PASSWORD_PATH,
    expected: "string",
    defaults: params.defaults,
    context: params.context,
    active: channel.enabled !== false,
    inactiveReason: "the acp-group channel is disabled.",
    // A password that cannot be resolved stops this channel's identities, not the gateway.
    owner: { ownerKind: "account", ownerId: `${CHANNEL}:default`, requiredForGateway: false, disposition: "isolate", contract: channel },
    apply: (value) => {
      net.seedPassword = value;
    },
  });
}

export const channelSecrets = { secretTargetRegistryEntries, collectRuntimeConfigAssignments };
