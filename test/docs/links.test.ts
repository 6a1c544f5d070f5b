import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

// Every relative link of the repo's own Markdown pages leads somewhere: the file exists, and a
// `#fragment` names a heading of that page (GitHub's anchors). Pages move and split; this keeps
// the links that point into them honest. Sections of design notes kept outside the repo are never
// cited: a reader of a clone cannot open them; the repo's own pages are linked instead.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const skipped = new Set(["node_modules", "dist", ".git", "fixtures", "results"]);

function filesEndingIn(dir: string, suffixes: readonly string[]): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (skipped.has(name) || name.startsWith(".")) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesEndingIn(path, suffixes);
    return suffixes.some((suffix) => name.endsWith(suffix)) ? [path] : [];
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(page: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(page, "utf8").split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const base = anchorOf(heading[1] as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The relative links of a page, outside code blocks and code spans, with their line numbers. */
function linksOf(page: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  let fenced = false;
  readFileSync(page, "utf8")
    .split("\n")
    .forEach((text, index) => {
      if (text.startsWith("```")) fenced = !fenced;
      if (fenced) return;
      const prose = text.replace(/`[^`]*`/g, "");
      for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1] as string;
        if (/^[a-z]+:/i.test(target)) continue;
        links.push({ target, line: index + 1 });
      }
    });
  return links;
}

describe("links between the repo's pages", () => {
  const pages = filesEndingIn(root, [".md"]);

  it("finds the pages", () => {
    assert.ok(pages.some((page) => page.endsWith("README.md")));
    assert.ok(pages.length >= 10, `only ${pages.length} pages`);
  });

  it("every relative link names a file that exists and a heading it has", () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const { target, line } of linksOf(page)) {
        const [path, fragment] = target.split("#") as [string, string | undefined];
        const file = path === "" ? page : join(dirname(page), decodeURI(path));
        const where = `${relative(root, page)}:${line}: ${target}`;
        if (!existsSync(file)) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (fragment !== undefined && file.endsWith(".md") && !anchorsOf(file).has(fragment))
          broken.push(`${where} (no heading with that anchor)`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it("cites no design notes outside the repo", () => {
    const cited = filesEndingIn(root, [".md", ".ts", ".py", ".sh", ".yaml"]).flatMap((page) =>
      readFileSync(page, "utf8")
        .split("\n")
        .flatMap((text, index) =>
          /DESIGN(\.md)? ?§/.test(text) ? [`${relative(root, page)}:${index + 1}`] : [],
        ),
    );
    assert.deepEqual(cited, []);
  });

  it("computes GitHub's anchors", () => {
    assert.equal(anchorOf("The monitor, without the server"), "the-monitor-without-the-server");
    assert.equal(anchorOf("Judging a conversation: `mentor verify`"), "judging-a-conversation-mentor-verify");
    assert.equal(
      anchorOf("Measured (2-core x86, node 20; one thread unless said)"),
      "measured-2-core-x86-node-20-one-thread-unless-said",
    );
  });
});
