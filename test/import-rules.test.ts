// The direction of imports inside src/, as docs/architecture.md draws it. Every module of
// src/ is parsed (TypeScript's own parser: static imports, re-exports and `import()` calls) and
// each row of RULES is checked against every import. A row names the importing files, the
// imports they must not make, and the few known exceptions with their reason. To add a rule,
// add a row.
import { readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));
/** The longest a module of src/ may grow before it is split by role. */
const MAX_LINES = 400;

/** One import: both paths relative to src/ with `/` separators (a target outside src/ starts with `../`). */
interface Edge {
  from: string;
  to: string;
  /** `import type` / `export type`: erased from the JavaScript, loads nothing. */
  typeOnly: boolean;
}

/** A set of files, by path relative to src/. */
type Match = (file: string) => boolean;
/** Every file in these folders of src/ (nested folders included). */
const under = (...folders: string[]): Match => (f) => folders.some((d) => f.startsWith(`${d}/`));
/** Exactly these files (paths relative to src/). */
const files = (...names: string[]): Match => (f) => names.includes(f);
const anyOf = (...ms: Match[]): Match => (f) => ms.some((m) => m(f));
const not = (m: Match): Match => (f) => !m(f);
/** Anything outside src/ reached by a relative path (test/, bench/, scripts/, …). */
const outsideSrc: Match = (f) => f.startsWith("../");

interface Rule {
  /** What the rule says, printed with every import that breaks it. */
  rule: string;
  /** The importing files the rule speaks of. */
  from: Match;
  /** The imports those files must not make. */
  forbid: Match;
  /** `import type` is allowed even where `forbid` matches (types load no code). */
  typesAllowed?: boolean;
  /** Known imports that break the row, as `from -> to`, each with why it stays for now. */
  except?: Readonly<Record<string, string>>;
}

/** The faces: what a host or a library user loads. */
const FACES = files("index.ts", "plugin.ts", "setup-entry.ts", "secret-contract-api.ts");
/** The shared base every layer may import. */
const BASE = files("types.ts", "conversation-ref.ts", "skip-reason.ts", "log.ts", "emitter.ts", "paths.ts");
/** One helper per idea (backoff, abortable wait, bounded map, case-insensitive compare): every layer may import them. */
const UTIL = under("util");
/**
 * Pure decision modules: functions of their inputs (and `now`), no timers, sockets or files. They
 * import (as values) only types.ts, the wire vocabulary and each other.
 */
const PURE_FILES = [
  ...["addressee", "answered", "command", "dispatch-gate", "held", "memory", "mention", "orphans", "retry-book", "seen-ids", "sender-access", "server-clock", "service-event", "signals", "social", "vitality"].map((n) => `group/${n}.ts`),
  ...["members", "opening", "reason", "rules", "second-person", "view"].map((n) => `group/addressing/${n}.ts`),
  "members/member-types.ts",
  "config/budget-windows.ts",
  ...["assemble", "budget-windows", "confusables", "context-xml", "decision", "dedup", "delay", "direct-prompt", "floor", "format-common", "identity-shared", "intent", "known-names", "loop-guard", "outbound", "prompt", "reply-address", "reply-policy", "sanitize", "sender-share", "token-estimate"].map((n) => `monitor/${n}.ts`),
  ...["access", "exchange", "journal"].map((n) => `direct/${n}.ts`),
  // The shared helpers that are pure (util/wait.ts owns a timer: not here).
  ...["backoff", "bounded-map", "equals-lower", "rank"].map((n) => `util/${n}.ts`),
];
const PURE = files(...PURE_FILES);

const RULES: readonly Rule[] = [
  {
    rule: "nothing in src/ imports test/, bench/ or scripts/",
    from: () => true,
    forbid: outsideSrc,
  },
  {
    rule: "only the command line imports src/cli/",
    from: not(under("cli")),
    forbid: under("cli"),
  },
  {
    rule: "src/runtime/ is imported only by the command line, the faces and where a host composes",
    from: not(anyOf(under("cli", "runtime"), FACES)),
    forbid: under("runtime"),
    except: {
      "openclaw/setup.ts -> runtime/join.ts": "the OpenClaw setup flow joins groups by link, as `acp-group join` does",
    },
  },
  {
    rule: "the shared base (types, log, emitter, paths) imports only itself and the config schema's types",
    from: BASE,
    forbid: not(anyOf(BASE, files("config/schema.ts"))),
  },
  {
    rule: "the shared helpers (util/) import nothing of src/ but each other",
    from: UTIL,
    forbid: not(UTIL),
  },
  {
    rule: "the group client (group/) is below the monitor: it imports only itself, the wire vocabulary, the budget windows, the shared helpers and the shared base",
    from: under("group"),
    forbid: not(anyOf(under("group", "wire", "util"), files("config/budget-windows.ts"), BASE)),
  },
  {
    rule: "direct conversations (direct/) sit beside the group client: they import only themselves, the group's pure memory and sender patterns, the wire vocabulary, the shared helpers and the shared base; the monitor answers them through types.ts",
    from: under("direct"),
    forbid: not(anyOf(under("direct", "wire", "util"), files("group/memory.ts", "group/sender-access.ts", "group/social.ts", "group/answered.ts"), BASE)),
  },
  {
    rule: "only the runtime and the command line's live view know direct conversations",
    from: not(anyOf(under("direct", "runtime", "cli"), FACES)),
    forbid: under("direct"),
  },
  {
    rule: "the engine (group/, monitor/, direct/) picks no concrete part: no socket, server, host, state file, runtime or command",
    from: under("group", "monitor", "direct"),
    forbid: under("network", "transport", "server", "openclaw", "backends", "state", "runtime", "cli", "replay", "report"),
  },
  {
    rule: "pure decision modules import only types.ts, the wire vocabulary and each other (the pure shared helpers among them)",
    from: PURE,
    forbid: not(anyOf(files("types.ts"), under("wire"), PURE)),
    typesAllowed: true,
  },
  {
    rule: "the wire vocabulary is the bottom: it imports only itself and types.ts",
    from: under("wire"),
    forbid: not(anyOf(under("wire"), files("types.ts"))),
  },
  {
    rule: "the network layer knows nothing about groups, group frames, hosts or the local server",
    from: under("network"),
    forbid: under("transport", "group", "monitor", "members", "profile", "openclaw", "backends", "server", "runtime", "cli", "replay", "report"),
  },
  {
    rule: "the transport carries group frames and knows nothing of the group engine",
    from: under("transport"),
    forbid: under("group", "monitor"),
  },
  {
    rule: "the local server is a peer, not a client: it shares the wire, never the client's transport, group engine, runtime, hosts or command line",
    from: under("server"),
    forbid: under("transport", "group", "runtime", "cli", "openclaw", "backends", "monitor", "replay", "report"),
  },
  {
    rule: "the server is started only by the runtime's dev network and the command line (the library face does not offer it)",
    from: not(anyOf(under("server", "cli"), files("runtime/dev-network.ts"))),
    forbid: under("server"),
  },
  {
    rule: "replay and its report run the engine on a simulated clock: no network, transport, server, runtime or command",
    from: under("replay", "report"),
    forbid: under("network", "transport", "server", "runtime", "cli"),
  },
];

function sourceFiles(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .map((f) => f.replaceAll("\\", "/"))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .sort();
}

/** Every relative import of one module: static imports, re-exports and `import("…")` calls. */
function importsOf(file: string): Edge[] {
  const text = readFileSync(join(SRC, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const edges: Edge[] = [];
  const add = (spec: string, typeOnly: boolean) => {
    if (!spec.startsWith(".")) return; // a package or node: built-in
    edges.push({ from: file, to: posix.normalize(posix.join(posix.dirname(file), spec)), typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.importClause?.isTypeOnly === true);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) add(arg.text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true); // `import("./x.ts").T` in a type position
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

/** The imports that break `rule`, as `from -> to` (exceptions left out). */
function breaches(rule: Rule, edges: readonly Edge[]): string[] {
  return edges
    .filter((e) => rule.from(e.from) && rule.forbid(e.to) && !(rule.typesAllowed && e.typeOnly))
    .map((e) => `${e.from} -> ${e.to}`)
    .filter((edge) => !rule.except?.[edge]);
}

describe("import rules over src/", () => {
  const modules = sourceFiles();
  const edges = modules.flatMap(importsOf);

  it("reads the whole tree (the scan is not vacuous)", () => {
    expect(modules.length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(500);
    // Every import resolves to a module that exists: a path this test misreads would pass every rule.
    const known = new Set(modules);
    expect(edges.filter((e) => !e.to.startsWith("../") && !known.has(e.to) && !e.to.endsWith(".js")).map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it("the folders the rules name exist, and each PURE module is a file of src/", () => {
    for (const folder of ["cli", "runtime", "wire", "util", "group", "direct", "monitor", "network", "transport", "server", "openclaw", "backends", "members", "state", "replay", "report", "profile", "config"]) {
      expect(modules.some(under(folder)), folder).toBe(true);
    }
    expect(PURE_FILES.filter((f) => !modules.includes(f))).toEqual([]);
  });

  for (const rule of RULES) {
    it(rule.rule, () => {
      expect(modules.some(rule.from), "the rule speaks of no file").toBe(true);
      expect(breaches(rule, edges)).toEqual([]);
      // An exception that no longer happens is stale: drop it from the row.
      const present = new Set(edges.map((e) => `${e.from} -> ${e.to}`));
      expect(Object.keys(rule.except ?? {}).filter((edge) => !present.has(edge))).toEqual([]);
    });
  }

  it(`no module of src/ is past ${MAX_LINES} lines (split by role, not squeezed)`, () => {
    const long = modules
      .map((f) => ({ f, lines: readFileSync(join(SRC, f), "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ f, lines }) => `${f}: ${lines}`);
    expect(long).toEqual([]);
  });

  it("a rule catches a breach (the check can fail)", () => {
    const cliOnly = RULES.find((r) => r.rule.startsWith("only the command line"))!;
    expect(breaches(cliOnly, [{ from: "group/mention.ts", to: "cli/args.ts", typeOnly: false }])).toEqual(["group/mention.ts -> cli/args.ts"]);
    const runtime = RULES.find((r) => r.rule.startsWith("src/runtime/"))!;
    expect(breaches(runtime, [{ from: "openclaw/setup.ts", to: "runtime/join.ts", typeOnly: false }])).toEqual([]);
    expect(breaches(runtime, [{ from: "openclaw/setup.ts", to: "runtime/identity.ts", typeOnly: false }])).toEqual(["openclaw/setup.ts -> runtime/identity.ts"]);
    const pure = RULES.find((r) => r.rule.startsWith("pure decision"))!;
    expect(breaches(pure, [{ from: "group/vitality.ts", to: "log.ts", typeOnly: false }])).toEqual(["group/vitality.ts -> log.ts"]);
    expect(breaches(pure, [{ from: "group/vitality.ts", to: "log.ts", typeOnly: true }])).toEqual([]);
    const rule = (start: string) => RULES.find((r) => r.rule.startsWith(start))!;
    expect(breaches(rule("the local server"), [{ from: "server/network/x.ts", to: "transport/connection.ts", typeOnly: false }])).toHaveLength(1);
    expect(breaches(rule("the local server"), [{ from: "server/x.ts", to: "group/held.ts", typeOnly: true }])).toHaveLength(1);
    // group → monitor is refused, types included: the group client reads the monitor through types.ts only.
    expect(breaches(rule("the group client"), [{ from: "group/gates.ts", to: "monitor/budget-windows.ts", typeOnly: false }])).toHaveLength(1);
    expect(breaches(rule("the group client"), [{ from: "group/ingest.ts", to: "monitor/dedup.ts", typeOnly: true }])).toHaveLength(1);
    expect(breaches(rule("the group client"), [{ from: "group/x.ts", to: "members/member-types.ts", typeOnly: true }])).toHaveLength(1);
    expect(breaches(rule("the group client"), [{ from: "group/gates.ts", to: "config/budget-windows.ts", typeOnly: false }])).toEqual([]);
    expect(breaches(rule("the network layer"), [{ from: "network/x.ts", to: "transport/frames.ts", typeOnly: false }])).toHaveLength(1);
    expect(breaches(rule("the transport"), [{ from: "transport/x.ts", to: "group/ingest.ts", typeOnly: false }])).toHaveLength(1);
    expect(breaches(rule("the wire vocabulary"), [{ from: "wire/x.ts", to: "log.ts", typeOnly: false }])).toHaveLength(1);
    expect(breaches(rule("the shared helpers"), [{ from: "util/wait.ts", to: "log.ts", typeOnly: false }])).toHaveLength(1);
    expect(breaches(rule("the group client"), [{ from: "group/ingest.ts", to: "util/equals-lower.ts", typeOnly: false }])).toEqual([]);
    expect(breaches(pure, [{ from: "group/vitality.ts", to: "util/wait.ts", typeOnly: false }])).toEqual(["group/vitality.ts -> util/wait.ts"]);
    expect(breaches(rule("the wire vocabulary"), [{ from: "wire/x.ts", to: "types.ts", typeOnly: true }])).toEqual([]);
    expect(breaches(rule("direct conversations"), [{ from: "direct/conversation.ts", to: "monitor/monitor.ts", typeOnly: true }])).toHaveLength(1);
    expect(breaches(rule("direct conversations"), [{ from: "direct/conversation.ts", to: "network/direct-link.ts", typeOnly: false }])).toHaveLength(1);
    expect(breaches(rule("direct conversations"), [{ from: "direct/conversation.ts", to: "group/memory.ts", typeOnly: false }])).toEqual([]);
  });
});
