// The layers' import rules, one row per rule: the wire vocabulary at the bottom, the server a
// peer of the client that shares only that vocabulary, the network below the transport, the
// transport below the group engine. Reads every import of every file in src/.
import { readdirSync, readFileSync } from "node:fs";
import { join, posix, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SRC = join(ROOT, "src");

interface Rule {
  /** Files under this path (relative to the repository) are checked. */
  from: string;
  /** They must not import anything under these paths… */
  never?: readonly string[];
  /** …or, when given, nothing in src/ outside these paths. */
  only?: readonly string[];
  why: string;
}

const RULES: readonly Rule[] = [
  { from: "src/server/", never: ["src/transport/", "src/group/"], why: "the server is a peer of the client: it shares the wire, not the client's transport or group engine" },
  { from: "src/network/", never: ["src/transport/"], why: "the network knows sessions, not group frames" },
  { from: "src/transport/", never: ["src/group/"], why: "the transport carries group frames and knows nothing of the group engine" },
  { from: "src/wire/", only: ["src/wire/", "src/types.ts"], why: "the wire vocabulary is the bottom: it imports nothing above it" },
];

interface Import {
  /** Importing file, relative to the repository, with `/`. */
  file: string;
  /** The imported module, resolved relative to the repository, with `/`. */
  target: string;
}

// `import … from "x"` and `export … from "x"` (over several lines too), `import "x"`, `import("x")`.
const SPECIFIER = /\b(?:import|export)\b[^;"'`]*?\bfrom\s*"([^"]+)"|\bimport\s*"([^"]+)"|\bimport\s*\(\s*"([^"]+)"\s*\)/g;

function importsOf(file: string, text: string): Import[] {
  const out: Import[] = [];
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1] ?? m[2] ?? m[3]!;
    if (!spec.startsWith(".")) continue;
    out.push({ file, target: posix.normalize(posix.join(posix.dirname(file), spec)) });
  }
  return out;
}

function sourceImports(): Import[] {
  return readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .flatMap((f) => {
      const file = relative(ROOT, join(SRC, f)).split(sep).join("/");
      return importsOf(file, readFileSync(join(SRC, f), "utf8"));
    });
}

/** Every import that breaks a rule, with the rule's reason. */
function violations(imports: readonly Import[], rules: readonly Rule[]): string[] {
  const out: string[] = [];
  for (const { file, target } of imports) {
    for (const rule of rules) {
      if (!file.startsWith(rule.from)) continue;
      const banned = rule.never?.some((p) => target.startsWith(p)) ?? false;
      const outside = rule.only !== undefined && target.startsWith("src/") && !rule.only.some((p) => target === p || target.startsWith(p));
      if (banned || outside) out.push(`${file} imports ${target}: ${rule.why}`);
    }
  }
  return out;
}

describe("import rules over src/", () => {
  const imports = sourceImports();

  it("reads the imports of every ruled folder (the scan is not vacuous)", () => {
    for (const rule of RULES) {
      expect(imports.filter((i) => i.file.startsWith(rule.from)).length, rule.from).toBeGreaterThan(5);
    }
    // Multi-line and type-only imports are read too.
    expect(importsOf("src/a/b.ts", 'import type {\n  X,\n  Y,\n} from "../c/d.ts";\nexport * from "./e.ts";\nawait import("../f.ts");')).toEqual([
      { file: "src/a/b.ts", target: "src/c/d.ts" },
      { file: "src/a/b.ts", target: "src/a/e.ts" },
      { file: "src/a/b.ts", target: "src/f.ts" },
    ]);
  });

  it.each(RULES.map((rule) => [rule.from, rule] as const))("hold for %s", (_from, rule) => {
    expect(violations(imports, [rule])).toEqual([]);
  });

  it("each rule catches an import that breaks it", () => {
    const breaking: Import[] = [
      { file: "src/server/x.ts", target: "src/transport/protocol.ts" },
      { file: "src/server/network/x.ts", target: "src/group/order.ts" },
      { file: "src/network/x.ts", target: "src/transport/limits.ts" },
      { file: "src/transport/x.ts", target: "src/group/same-lower.ts" },
      { file: "src/wire/x.ts", target: "src/log.ts" },
    ];
    for (const bad of breaking) expect(violations([bad], RULES), `${bad.file} → ${bad.target}`).toHaveLength(1);
    // What the rules allow stays allowed.
    const fine: Import[] = [
      { file: "src/server/x.ts", target: "src/wire/frames.ts" },
      { file: "src/network/x.ts", target: "src/wire/backoff.ts" },
      { file: "src/transport/x.ts", target: "src/network/peer-channel.ts" },
      { file: "src/wire/x.ts", target: "src/types.ts" },
      { file: "src/wire/x.ts", target: "src/wire/plain.ts" },
    ];
    expect(violations(fine, RULES)).toEqual([]);
  });
});
