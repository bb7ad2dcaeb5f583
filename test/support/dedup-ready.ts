// Every test file starts with the dedup hasher compiled. The monitor awaits it before its first
// dispatch; its compile is real work, which fake timers do not wait for, so on a loaded machine a
// timeline test could otherwise see its first dispatch start seconds of fake time late.
import { initDedup } from "../../src/monitor/dedup.ts";

await initDedup();
