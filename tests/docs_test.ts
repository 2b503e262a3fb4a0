/**
 * The published pages (README.md and docs/): every relative link resolves to
 * a file that is published with the package (not excluded in deno.json), every
 * `#anchor` names a heading of its page, and the README's figures are those
 * of `bench/figures.json` (which `bench/chart.ts` draws into docs/figures.svg).
 */

import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
const text = (path: string) => Deno.readTextFileSync(new URL(path, ROOT));
const config = JSON.parse(text("deno.json")) as { publish: { exclude: string[] } };

/** Published markdown pages, relative to the root. */
function pages(): string[] {
  const docs = [...Deno.readDirSync(new URL("docs/", ROOT))].filter((e) => e.isFile && e.name.endsWith(".md"));
  return ["README.md", ...docs.map((e) => `docs/${e.name}`)];
}

/** Whether a path (relative to the root, normalized) is left out of the package. */
function excluded(path: string): boolean {
  return config.publish.exclude.some((e) =>
    path === e.replace(/\/$/, "") || path.startsWith(e.endsWith("/") ? e : `${e}/`)
  );
}

/** The anchors GitHub and JSR give a page's headings. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6} (.+)$/gm)) {
    out.add(m[1]!.trim().toLowerCase().replace(/[`*_]/g, "").replace(/[^\p{L}\p{N} -]/gu, "").replace(/ /g, "-"));
  }
  return out;
}

/** Links and images of a page, outside code blocks: `[text](target)`. */
function links(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, "");
  return [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

Deno.test("every relative link of the published pages resolves to a published file, and every anchor to a heading", () => {
  const problems: string[] = [];
  for (const page of pages()) {
    const source = text(page);
    for (const target of links(source)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split("#") as [string, string | undefined];
      const resolved = path === "" ? page : new URL(path, new URL(page, ROOT)).pathname.slice(ROOT.pathname.length);
      if (resolved.startsWith("..") || !new URL(resolved, ROOT).pathname.startsWith(ROOT.pathname)) {
        problems.push(`${page}: ${target} points outside the package`);
        continue;
      }
      try {
        Deno.statSync(new URL(resolved, ROOT));
      } catch {
        problems.push(`${page}: ${target} does not exist`);
        continue;
      }
      if (excluded(resolved)) problems.push(`${page}: ${target} is not published (deno.json publish.exclude)`);
      if (anchor !== undefined && resolved.endsWith(".md") && !anchors(text(resolved)).has(anchor)) {
        problems.push(`${page}: ${target} names no heading of ${resolved}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("the link check itself refuses a page linking outside the package or to an excluded file", () => {
  assert.equal(excluded("bench/RESULTS.md"), true);
  assert.equal(excluded("docs/kernels.md"), false);
  assert.deepEqual(links("see [a](docs/a.md) and ![b](x.svg)\n```md\n[c](no.md)\n```"), ["docs/a.md", "x.svg"]);
  assert.equal(anchors("## Counts\n## What runs as written").has("what-runs-as-written"), true);
});

/** A block's table rows as trimmed cells and its prose as one line (deno fmt pads table columns and rewraps prose). */
function folded(block: string): string[] {
  const rows: string[] = [];
  const prose: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("|")) rows.push(line.split("|").map((c) => c.trim().replace(/^-+$/, "---")).join("|"));
    else if (line.trim() !== "") prose.push(line.trim());
  }
  return [prose.join(" "), ...rows];
}

Deno.test("the README's figures and docs/figures.svg are what bench/chart.ts makes of bench/figures.json", async () => {
  const { figuresSvg, figuresTable } = await import("../bench/chart.ts");
  const figures = JSON.parse(text("bench/figures.json"));
  const readme = text("README.md");
  const block = readme.slice(readme.indexOf("<!-- figures -->") + 16, readme.indexOf("<!-- /figures -->"));
  assert.deepEqual(folded(block), folded(figuresTable(figures)));
  assert.equal(text("docs/figures.svg"), figuresSvg(figures));
  // Every figure of the table appears in the RESULTS.md entry named as its source.
  const results = text("bench/RESULTS.md");
  assert.ok(results.includes(figures.source.replace(/^runs? /, "Run ").split(/[–,]/)[0]!), figures.source);
});
