/**
 * Checks the documentation citations in source comments and strings: every `docs/<page>.md` must
 * name a page that exists and every `docs/<page>.md#<anchor>` a heading of that page (anchors as
 * GitHub computes them, by the docs checker's `headingAnchors`); section citations of the README (`README "Security"`,
 * `README, "Webhook ingress"`, `README: Running several instances`), whose sections moved to docs/,
 * are refused. Used by doc-citations.test.ts.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { headingAnchors } from "../docs/check-blocks.ts";
import { ROOT } from "./import-graph.ts";

/** One citation that does not resolve. */
export interface BadCitation {
  file: string;
  line: number;
  citation: string;
  reason: string;
}

const DOC_CITATION = /\bdocs\/([a-z0-9][a-z0-9-]*)\.md(?:#([A-Za-z0-9_-]+))?/g;
/** `README "Security"`, `README, "Webhook ingress"`, `README, Sandbox`, `README: Running …`, `README's … reference`. */
const README_SECTION = /\bREADME(?:\s*"|,\s*["A-Z]|:\s*["A-Z]|'s\s[\w ]*?(?:reference|section)\b)/g;

/**
 * The citations of `text` (the contents of `file`) that do not resolve. `readPage` returns a
 * docs page's markdown, or undefined when the page does not exist.
 */
export function badCitations(
  file: string,
  text: string,
  readPage: (page: string) => string | undefined,
): BadCitation[] {
  const bad: BadCitation[] = [];
  const anchorCache = new Map<string, Set<string> | undefined>();
  const anchors = (page: string) => {
    if (!anchorCache.has(page)) {
      const markdown = readPage(page);
      anchorCache.set(page, markdown === undefined ? undefined : headingAnchors(markdown));
    }
    return anchorCache.get(page);
  };
  // A comment's citation may be split over two lines (`README\n * "Security"`): join them first.
  const lines = text.split("\n");
  lines.forEach((raw, index) => {
    const next = lines[index + 1]?.replace(/^\s*(?:\*|\/\/)\s*/, "") ?? "";
    const line = `${raw} ${next}`;
    for (const match of raw.matchAll(DOC_CITATION)) {
      const page = match[1] as string;
      const anchor = match[2];
      const known = anchors(page);
      if (known === undefined) {
        bad.push({ file, line: index + 1, citation: match[0], reason: `no page docs/${page}.md` });
      } else if (anchor !== undefined && !known.has(anchor)) {
        bad.push({ file, line: index + 1, citation: match[0], reason: `no heading #${anchor} in docs/${page}.md` });
      }
    }
    for (const match of line.matchAll(README_SECTION)) {
      if ((match.index ?? 0) >= raw.length) continue; // reported on the line where it starts
      bad.push({
        file,
        line: index + 1,
        citation: match[0].trim(),
        reason: "cites a README section: cite docs/<page>.md#<anchor> instead",
      });
    }
  });
  return bad;
}

/** Every source file (`.ts`, `.tsx`, `.js`, `.mjs`) under `dirs`, root-relative. */
export function listCitingFiles(dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(?:ts|tsx|js|mjs)$/.test(entry.name)) out.push(path);
    }
  };
  for (const dir of dirs) if (existsSync(join(ROOT, dir))) walk(dir);
  return out.sort();
}

/** Reads `docs/<page>.md` of the repository, or undefined when it does not exist. */
export function readDocsPage(page: string): string | undefined {
  const path = join(ROOT, "docs", `${page}.md`);
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}
