// Constants of the local network that light modules (the CLI's help) need without loading it.

/** The domain of the local network when none is given: clearly not a real access point. */
export const DEFAULT_LOCAL_DOMAIN = "acp.local";
