// Files the package ships beside its code. src/ and dist/ sit at the same depth in the package,
// so these resolve the same from the checkout and from an installed tarball.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The demo configuration `start` uses without `--config`. */
export const DEFAULT_CONFIG = resolve(dirname(fileURLToPath(import.meta.url)), "..", "config", "demo.json");

/** The package's own package.json (its version for `acp-group --version`). */
export const PACKAGE_JSON = resolve(dirname(fileURLToPath(import.meta.url)), "..", "package.json");
