// Links between README.md and the pages of docs/ land somewhere: every relative link names a file
// of the repository, and every `#anchor` a heading of the page it points to (GitHub's anchor
// rules). Headings are the pages' stable anchors; renaming one fails here until its links follow.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { docFiles, REPO } from "../../scripts/docs/blocks.ts";

const read = (file: string) => readFileSync(join(REPO, file), "utf8");

/** GitHub's anchor for a heading: lower case, punctuation dropped (not `-` or `_`), spaces to `-`. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(file: string): Set<string> {
  const text = read(file).replace(/```[\s\S]*?```/g, "");
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

describe("links in README.md and docs/", () => {
  const files = docFiles();
  const links = files.flatMap((file) =>
    [...read(file).replace(/```[\s\S]*?```/g, "").matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!)
      .filter((href) => !/^[a-z]+:/.test(href))
      .map((href) => ({ file, href })),
  );

  it("are found (the scan is not vacuous)", () => {
    expect(links.length).toBeGreaterThan(40);
    expect(links.filter((l) => l.href.includes("#")).length).toBeGreaterThan(20);
  });

  it("name files that exist and headings those files have", () => {
    const broken: string[] = [];
    for (const { file, href } of links) {
      const [path, anchor] = href.split("#") as [string, string?];
      const target = path === "" ? file : normalize(join(dirname(file), path));
      if (!existsSync(join(REPO, target))) {
        broken.push(`${file}: ${href} (no file ${target})`);
        continue;
      }
      if (anchor !== undefined && target.endsWith(".md") && !anchorsOf(target).has(anchor)) broken.push(`${file}: ${href} (no heading #${anchor} in ${target})`);
    }
    expect(broken).toEqual([]);
  });
});
