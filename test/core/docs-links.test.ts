import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { anchorsOf, docFiles, githubSlug, linksOf, parseDoc, ROOT } from "../helpers/markdown";

/**
 * Issue 36: every relative link of the docs (docFiles: README.md, ARCHITECTURE.md, docs/*.md, …) leads
 * somewhere. A path must name a file or folder of the tree; an anchor on a Markdown file must be one
 * of its headings' anchors, computed as GitHub computes them (or an explicit <a id>/<a name>); a
 * line anchor (#L10, #L10-L20) on another file must fall within it. Links with a scheme (https:,
 * mailto:) are not followed. Each broken link is reported as file:line.
 */
function brokenLinks(file: string): string[] {
  const doc = parseDoc(file);
  const problems: string[] = [];
  for (const { target, line } of linksOf(doc)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue;
    const where = `${file}:${line}`;
    const hash = target.indexOf("#");
    const rawPath = hash === -1 ? target : target.slice(0, hash);
    const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const path = decodeURIComponent(rawPath.replace(/\?.*$/, ""));
    const absolute =
      path === "" ? join(ROOT, file) : path.startsWith("/") ? join(ROOT, path) : resolve(ROOT, dirname(file), path);
    const shown = relative(ROOT, absolute) || ".";
    if (!absolute.startsWith(ROOT)) {
      problems.push(`${where}: link "${target}" leaves the repository`);
      continue;
    }
    if (!existsSync(absolute)) {
      problems.push(`${where}: link "${target}" names ${shown}, which does not exist`);
      continue;
    }
    if (anchor === undefined || anchor === "") continue;
    if (statSync(absolute).isDirectory()) {
      problems.push(`${where}: link "${target}" puts an anchor on a folder`);
      continue;
    }
    if (absolute.endsWith(".md")) {
      const anchors = anchorsOf(parseDoc(relative(ROOT, absolute)));
      if (!anchors.has(anchor)) {
        const near = [...anchors].filter((a) => a.includes(anchor) || anchor.includes(a)).slice(0, 3);
        problems.push(
          `${where}: link "${target}": ${shown} has no heading with anchor #${anchor}` +
            (near.length ? ` (did you mean ${near.map((a) => `#${a}`).join(", ")}?)` : ""),
        );
      }
      continue;
    }
    const lines = /^L(\d+)(?:-L(\d+))?$/.exec(anchor);
    if (!lines) {
      problems.push(`${where}: link "${target}": #${anchor} is neither a heading of a Markdown file nor a line anchor`);
      continue;
    }
    const count = readFileSync(absolute, "utf8").split("\n").length;
    const last = Number(lines[2] ?? lines[1]);
    if (last > count || Number(lines[1]) < 1) problems.push(`${where}: link "${target}": ${shown} has ${count} lines`);
  }
  return problems;
}

/**
 * A page#anchor written as text, not as a link ("see docs/capacity.md#tested-configurations", in
 * prose, code or a comment of a block): when it names a Markdown file of the tree (from the
 * document's folder or the root), the anchor must be one of its headings'.
 */
function brokenMentions(file: string): string[] {
  const doc = parseDoc(file);
  const problems: string[] = [];
  const lines = doc.text.split("\n");
  lines.forEach((text, i) => {
    for (const m of text.matchAll(/(?<![\w./-]|\]\()([\w./-]+\.md)#([\w-]+)/g)) {
      const [, path, anchor] = m;
      const candidates = [resolve(ROOT, dirname(file), path!), resolve(ROOT, path!)];
      const target = candidates.find((c) => c.startsWith(ROOT) && existsSync(c) && statSync(c).isFile());
      if (!target) continue;
      const shown = relative(ROOT, target);
      if (!anchorsOf(parseDoc(shown)).has(anchor!)) {
        problems.push(`${file}:${i + 1}: "${path}#${anchor}" (as text): ${shown} has no heading with anchor #${anchor}`);
      }
    }
  });
  return problems;
}

describe("links in the docs", () => {
  test("GitHub's anchors: punctuation dropped, spaces each a hyphen, code and emphasis kept as text", () => {
    expect(githubSlug("Offline engine")).toBe("offline-engine");
    expect(githubSlug("`/v1` and the OpenAI SDK (streaming, tools)")).toBe("v1-and-the-openai-sdk-streaming-tools");
    expect(githubSlug("Limits & quotas: **per key**")).toBe("limits--quotas-per-key");
    expect(githubSlug("[Chaos](x.md) 2026-11-27, 07:48")).toBe("chaos-2026-11-27-0748");
    expect(githubSlug("snake_case names")).toBe("snake_case-names");
    expect(githubSlug("Über _emphasis_")).toBe("über-emphasis");
  });

  test("a repeated heading gets -1, -2; an explicit <a id> counts; links in code do not, a page#anchor as text does", () => {
    const doc = parseDoc("test/fixtures/docs/links.md");
    expect([...anchorsOf(doc)]).toEqual(["top", "notes", "notes-1", "notes-2", "by-hand"]);
    const lines = readFileSync(join(ROOT, "package.json"), "utf8").split("\n").length;
    expect(brokenLinks("test/fixtures/docs/links.md")).toEqual([
      'test/fixtures/docs/links.md:9: link "#notes-3": test/fixtures/docs/links.md has no heading with anchor #notes-3 (did you mean #notes?)',
      'test/fixtures/docs/links.md:10: link "../../../docs/nowhere.md" names docs/nowhere.md, which does not exist',
      `test/fixtures/docs/links.md:11: link "../../../package.json#L99999": package.json has ${lines} lines`,
    ]);
    expect(brokenMentions("test/fixtures/docs/links.md")).toEqual([
      'test/fixtures/docs/links.md:12: "links.md#nothing-here" (as text): test/fixtures/docs/links.md has no heading with anchor #nothing-here',
      'test/fixtures/docs/links.md:12: "../../../README.md#no-such-part" (as text): README.md has no heading with anchor #no-such-part',
    ]);
  });

  for (const file of docFiles()) {
    test(`${file}: every relative link and anchor resolves`, () => {
      expect([...brokenLinks(file), ...brokenMentions(file)]).toEqual([]);
    });
  }
});
