// No class of src/ inherits state: a class composes its collaborators as private fields. The one
// kind of `extends` allowed is an error class (its chain ends at a built-in Error), which carries
// a code and context and nothing else. Every module of src/ is parsed with TypeScript's own parser.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));
const BUILT_IN_ERRORS = new Set(["Error", "TypeError", "RangeError", "AggregateError"]);

interface Declared {
  file: string;
  name: string;
  /** The class named after `extends`, when there is one. */
  base: string | undefined;
}

function classesIn(file: string, text: string): Declared[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: Declared[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isClassDeclaration(node) || ts.isClassExpression(node)) && node.name) {
      const heritage = node.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword);
      const base = heritage?.types[0]?.expression;
      out.push({ file, name: node.name.text, base: base ? base.getText(source) : undefined });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** The classes whose `extends` chain does not end at a built-in error. */
function inheritingState(classes: readonly Declared[]): string[] {
  const byName = new Map(classes.map((c) => [c.name, c]));
  const isError = (name: string, seen = new Set<string>()): boolean => {
    if (BUILT_IN_ERRORS.has(name)) return true;
    const c = byName.get(name);
    if (!c?.base || seen.has(name)) return false;
    seen.add(name);
    return isError(c.base, seen);
  };
  return classes.filter((c) => c.base !== undefined && !isError(c.base)).map((c) => `${c.file}: ${c.name} extends ${c.base}`);
}

describe("classes of src/", () => {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .map((f) => f.replaceAll("\\", "/"))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
  const classes = files.flatMap((f) => classesIn(f, readFileSync(join(SRC, f), "utf8")));

  it("reads the whole tree: classes, and error classes among them", () => {
    expect(classes.length).toBeGreaterThan(30);
    expect(classes.filter((c) => c.base !== undefined).length).toBeGreaterThan(10);
  });

  it("no class inherits state: the only `extends` is an error class's", () => {
    expect(inheritingState(classes)).toEqual([]);
  });

  it("the check can fail: state inheritance is caught, error chains are not", () => {
    const sample = [
      ...classesIn("a.ts", "class Base { n = 0 }\nclass Impl extends Base {}\nclass Mine extends Error {}\nclass Deeper extends Mine {}\nconst X = class Y extends Base {};"),
    ];
    expect(inheritingState(sample)).toEqual(["a.ts: Impl extends Base", "a.ts: Y extends Base"]);
  });
});
