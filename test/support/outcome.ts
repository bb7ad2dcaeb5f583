// Reading a dispatch outcome in tests: why it did not send (undefined when it sent).
import type { DispatchOutcome, SkipReason } from "../../src/types.ts";

export function reasonOf(o: DispatchOutcome): SkipReason | undefined {
  return o.kind === "sent" ? undefined : o.reason;
}
