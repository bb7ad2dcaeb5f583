// The `client_info` a client sends with its sign-in: which program signs in. `acp-group chat`
// says it is a person's client; a network whose operator allows it (the local network's
// `peopleFromChat`) then reports that member as a person. The member's own word alone never is.

/** What the channel's agents send. */
export const AGENT_CLIENT_INFO = "acp-group-channel";
/** What `acp-group chat` (a person's client) sends. */
export const PERSON_CLIENT_INFO = "acp-group-chat (person)";

/** Does this `client_info` declare a person's client? */
export function declaresPerson(clientInfo: string | undefined): boolean {
  return clientInfo !== undefined && /\(person\)\s*$/i.test(clientInfo);
}
