// Every reason the code can print has a row in docs/behaviour.md (or docs/evaluation.md for the
// suite's miss causes): the typed unions are read from the source with TypeScript's parser, the
// addressing reasons from the type that names them (or, while they are free strings, from the
// classifier's source), and every `why` a replay of the nine bundled logs prints is checked too.
// Adding a reason to the code without documenting it fails here, naming the reason.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { cli, REPO } from "../../scripts/docs/blocks.ts";

const SRC = join(REPO, "src");
const read = (file: string) => readFileSync(join(REPO, file), "utf8");

const sourceFiles = (): string[] =>
  readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .map((f) => f.split("\\").join("/"))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));

/**
 * The string members of a union type alias or `as const` array named `name`, wherever in src/ it
 * is declared. A template literal member (`named-us:${string}`) gives its head (`named-us`).
 */
function unionMembers(name: string): string[] {
  const out: string[] = [];
  const collect = (node: ts.Node): void => {
    if (ts.isLiteralTypeNode(node) && ts.isStringLiteral(node.literal)) out.push(node.literal.text);
    else if (ts.isTemplateLiteralTypeNode(node)) out.push(node.head.text.replace(/:$/, ""));
    else if (ts.isStringLiteral(node)) out.push(node.text);
    else ts.forEachChild(node, collect);
  };
  for (const file of sourceFiles()) {
    const text = readFileSync(join(SRC, file), "utf8");
    if (!text.includes(name)) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const visit = (node: ts.Node): void => {
      if (ts.isTypeAliasDeclaration(node) && node.name.text === name) collect(node.type);
      else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === name && node.initializer) collect(node.initializer);
      else ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return [...new Set(out)];
}

/**
 * Addressing reasons: the members of a type named like `AddressingReason` when the code has one;
 * while they are free strings, the literals src/group/conversation.ts gives as `addressing`
 * (directly, through `#toUs(…, "reason")`, or as a `reason:${name}` template).
 */
function addressingReasons(): string[] {
  for (const name of ["AddressingReason", "AddressReason", "AddressingRuleName"]) {
    const members = unionMembers(name);
    if (members.length > 0) return members;
  }
  const text = read("src/group/conversation.ts");
  const found = [
    ...[...text.matchAll(/addressing: "([a-z-]+)"/g)].map((m) => m[1]!),
    ...[...text.matchAll(/#toUs\(m, (?:true|false), "([a-z-]+)"\)/g)].map((m) => m[1]!),
    ...[...text.matchAll(/`([a-z-]+):\$\{/g)].map((m) => m[1]!),
  ];
  return [...new Set(found)];
}

/** Reasons documented on a page: the first cell of a table row, in backticks, up to a `:<arg>`. */
function documented(page: string): Set<string> {
  const rows = read(page)
    .split("\n")
    .map((l) => /^\| `([^`]+)` \|/.exec(l)?.[1])
    .filter((r): r is string => r !== undefined);
  return new Set(rows.map((r) => r.replace(/:<[^>]+>$/, "")));
}

describe("every reason the code prints is documented", () => {
  const behaviour = documented("docs/behaviour.md");

  const unions: Array<[string, number]> = [
    ["SkipReason", 15],
    ["DropReason", 8],
    ["GateBlockReason", 6],
    ["ReplyTypeReason", 5],
  ];
  for (const [name, atLeast] of unions) {
    it(`${name}: each member has a row in docs/behaviour.md`, () => {
      const members = unionMembers(name);
      expect(members.length, `${name} not found in src/`).toBeGreaterThanOrEqual(atLeast);
      expect(members.filter((m) => !behaviour.has(m))).toEqual([]);
    });
  }

  it("MISS_CAUSES: each has a row in docs/evaluation.md", () => {
    const causes = unionMembers("MISS_CAUSES");
    expect(causes.length).toBeGreaterThanOrEqual(6);
    const evaluation = documented("docs/evaluation.md");
    expect(causes.filter((c) => !evaluation.has(c))).toEqual([]);
  });

  it("addressing reasons: each has a row in docs/behaviour.md", () => {
    const reasons = addressingReasons();
    expect(reasons.length).toBeGreaterThanOrEqual(12);
    expect(reasons.filter((r) => !behaviour.has(r))).toEqual([]);
  });

  it("every `why` a replay of the nine bundled logs prints has a row in docs/behaviour.md", async () => {
    const personas = JSON.parse(read("test/fixtures/irc-dev/personas.json")) as Record<string, { personas: Array<{ nick: string }> }>;
    const seen = new Set<string>();
    for (const [log, p] of Object.entries(personas)) {
      const report = JSON.parse(await cli(["replay", `test/fixtures/irc-dev/${log}.jsonl`, "--persona", p.personas[0]!.nick, "--responder", "mention", "--json"])) as {
        messages: Array<{ why: string | null }>;
        dispatches: Array<{ outcome: { skipReason: string | null } }>;
        drops: Array<{ reason: string }>;
      };
      for (const m of report.messages) if (m.why !== null) seen.add(m.why.replace(/:.*$/, ""));
      for (const d of report.dispatches) if (d.outcome.skipReason !== null) seen.add(d.outcome.skipReason);
      for (const d of report.drops) seen.add(d.reason);
    }
    // The logs exercise the common reasons; the unions above hold the rest.
    expect(seen.size).toBeGreaterThanOrEqual(8);
    expect([...seen].filter((r) => !behaviour.has(r))).toEqual([]);
  }, 60_000);
});
