// Content types of the group service's own event messages (join, leave, rules changed…): the
// service writes them, the client shows them as event lines when that service sent them.

/** Content types the prompt shows as events (when the group service sends them). */
export const EVENT_CONTENT_TYPES: ReadonlySet<string> = new Set(["event", "system", "group_event"]);
