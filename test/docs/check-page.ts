/**
 * One page through the doc test: its blocks extracted, the static ones checked, the recipes
 * grouped into sessions for run-recipes.ts. The doc test and the broken-fixture test share it.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { checkCode, checkJson, checkJsonConfig, checkLinks, checkTsConfig } from "./check-blocks.ts";
import { type BlockKind, type DocBlock, extractBlocks, misplacedDirectives } from "./extract-blocks.ts";
import { INSTALLS, planSessions, type Session } from "./run-recipes.ts";

export interface BlockProblem {
  block: DocBlock;
  problems: string[];
}

export interface PageCheck {
  page: string;
  blocks: DocBlock[];
  /** Problems of the blocks checked without running anything, and of the page's links. */
  problems: BlockProblem[];
  linkProblems: string[];
  sessions: Session[];
}

/** Extracts and statically checks one page (`page` relative to `repoRoot`). */
export async function checkPage(page: string, repoRoot: string, workDir: string): Promise<PageCheck> {
  const markdown = await readFile(join(repoRoot, page), "utf8");
  const blocks = extractBlocks(page, markdown);
  const problems: BlockProblem[] = [];
  // Blocks with `file:` (a config, a transform module) are written first: configs may name them.
  const filesDir = join(workDir, `files-${page.replaceAll("/", "-")}`);
  for (const block of blocks) {
    const name = block.annotation.file;
    if (name === undefined) continue;
    await mkdir(dirname(join(filesDir, name)), { recursive: true });
    await writeFile(join(filesDir, name), block.body);
  }
  for (const block of blocks) {
    const found = [
      ...block.problems,
      ...misplacedDirectives(block).map((d) => `directive "${d}" does not apply to a ${block.kind} block`),
    ];
    found.push(...(await checkBlock(block, repoRoot, workDir, filesDir)));
    if (found.length > 0) problems.push({ block, problems: found });
  }
  return { page, blocks, problems, linkProblems: checkLinks(page, markdown, repoRoot), sessions: planSessions(blocks) };
}

async function checkBlock(block: DocBlock, repoRoot: string, workDir: string, filesDir: string): Promise<string[]> {
  switch (block.kind) {
    case "json-config":
      return checkJsonConfig(block, filesDir);
    case "ts-config":
      return checkTsConfig(block, workDir, repoRoot);
    case "json":
      return checkJson(block);
    case "code":
      return checkCode(block);
    case "recipe":
      // The session directory links the repository's node_modules: an install there would change it.
      return block.annotation.skip === undefined && INSTALLS.test(block.body)
        ? [
            "a recipe that installs packages cannot run in the doc test: put the install in its own block with skip: and a reason",
          ]
        : [];
    case "output":
    case "diagram":
      return [];
    case "unknown":
      return [
        `a block of unknown kind "${block.info}": use sh, json config, ts config, json, js, ts, html, text, toml or mermaid (docs/contributing.md)`,
      ];
  }
}

/** Blocks per kind, recipes split into run and skipped. */
export function countBlocks(blocks: DocBlock[]): Record<BlockKind | "recipe (skipped)", number> {
  const counts = {
    recipe: 0,
    "recipe (skipped)": 0,
    "json-config": 0,
    "ts-config": 0,
    json: 0,
    code: 0,
    output: 0,
    diagram: 0,
    unknown: 0,
  };
  for (const block of blocks) {
    if (block.kind === "recipe" && block.annotation.skip !== undefined) counts["recipe (skipped)"]++;
    else counts[block.kind]++;
  }
  return counts;
}

/** A readable failure message for a block. */
export function describeProblem(block: DocBlock, problems: string[]): string {
  return `${block.page}:${block.line} (\`\`\`${block.info}):\n  ${problems.join("\n  ")}`;
}
