// Every test file starts with the dedup hasher compiled. The wasm compiles as real work that fake
// timers do not wait for: a test whose first dispatch awaits it would otherwise start that
// dispatch late in fake time on a loaded machine (src/monitor/dedup.ts says why the module cannot
// simply await it at its top level).
import { dedupReady } from "../../src/monitor/dedup.ts";

await dedupReady;
