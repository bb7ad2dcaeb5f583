// The host's light entry (package.json `openclaw.setupEntry`): what `openclaw doctor`, `channels add`
// and the other commands that run without a gateway load to reach the channel's adapters.
import { acpGroupChannelPlugin } from "./plugin.ts";

export default { plugin: acpGroupChannelPlugin };
