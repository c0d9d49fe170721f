/**
 * Docs that run: every fenced block of README.md and docs/*.md is checked by kind
 * (docs/contributing.md): configs through the real schema, samples parsed, shell recipes run in a
 * fresh directory against real processes (the zero-config gateway, redis-server, wrangler dev).
 * A block of unknown kind fails. The fixture test proves that broken examples fail.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPage, countBlocks, describeProblem, type PageCheck } from "./check-page.ts";
import type { DocBlock } from "./extract-blocks.ts";
import { type RecipeResult, runSession, sessionIsolation } from "./run-recipes.ts";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const pages = [
  "README.md",
  ...(await readdir(join(repoRoot, "docs")))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];

let workDir: string;
const checked = new Map<string, PageCheck>();
const ran: RecipeResult[] = [];

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "doctest-static-"));
  for (const page of pages) checked.set(page, await checkPage(page, repoRoot, workDir));
});

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
  const all = [...checked.values()].flatMap((c) => c.blocks);
  const counts = countBlocks(all);
  const passedRecipes = ran.filter((r) => r.status === "passed").length;
  console.log(
    `doc test: ${all.length} blocks in ${pages.length} pages; ${passedRecipes} recipes run and passed; per kind ${JSON.stringify(counts)}; sessions isolated by ${sessionIsolation()}`,
  );
});

const waiting: (() => void)[] = [];
let running = 0;
/** Runs `task` once fewer than two others run (the machine has two cores; a session is mostly start-up CPU). */
async function twoAtATime<T>(task: () => Promise<T>): Promise<T> {
  const parallel = sessionIsolation() === "namespaces" ? 2 : 1;
  if (running >= parallel) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await task();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

function failures(results: { block: DocBlock; problems: string[] }[]): string {
  return results.map((r) => describeProblem(r.block, r.problems)).join("\n\n");
}

describe.each(pages)("%s", (page) => {
  it("has only blocks of known kinds, valid configs and samples, and links to files that exist", () => {
    const check = checked.get(page) as PageCheck;
    expect(failures(check.problems)).toBe("");
    expect(check.linkProblems).toEqual([]);
  });
});

// Sessions are isolated from each other (own directory, network and processes): two at a time.
describe("recipes", () => {
  it.concurrent.for(pages)("%s runs its recipes as written", { timeout: 180_000 }, async (page, { expect }) => {
    const check = checked.get(page) as PageCheck;
    for (const session of check.sessions) {
      const results = await twoAtATime(() => runSession(session, repoRoot));
      ran.push(...results);
      const bad = results
        .filter((r) => r.status === "failed" || r.status === "not-reached")
        .map((r) => ({ block: r.block, problems: [...r.problems, `output:\n${r.output.slice(-2000)}`] }));
      expect(failures(bad), `session "${session.name}" of ${page}`).toBe("");
    }
  });
});

describe("the doc test itself", () => {
  it("fails on the broken examples of test/docs/fixtures/broken.md", async () => {
    const fixture = "test/docs/fixtures/broken.md";
    const check = await checkPage(fixture, repoRoot, workDir);
    const problemAt = (needle: string) =>
      check.problems.find((p) => p.block.body.includes(needle))?.problems.join("\n") ?? "";
    // JSONC is not JSON; a config without sources is not complete; a wrong type names its path.
    expect(problemAt("// comments")).toMatch(/unknown kind "jsonc"/);
    expect(problemAt('"prefix": "gw"')).toMatch(/sources: expected a value/);
    expect(problemAt('"toleranceSeconds": "5"')).toMatch(/sources\.0\.toleranceSeconds/);
    expect(problemAt('"sqllite"')).toMatch(/type error: gateway\.config\.ts.*"sqllite"/);
    // An unexplained placeholder; pseudo-JSON in a sample; a block with no kind; a code sample that does not parse.
    expect(problemAt("${CRM_WHSEC}")).toMatch(/CRM_WHSEC is not set/);
    expect(problemAt('"id": "evt_…",')).toMatch(/not valid JSON/);
    expect(problemAt("no info string")).toMatch(/unknown kind ""/);
    expect(problemAt("connect(")).toMatch(/does not parse/);
    expect(problemAt("skip:")).toBe("");
    expect(check.linkProblems).toEqual([
      "link to ../../../docs/no-such-page.md: no such file",
      "link to ../../../docs/contributing.md#no-such-heading: no heading with that anchor",
    ]);

    // A recipe whose command fails, and one whose output is not what the page promises.
    const [session] = check.sessions;
    const results = await runSession(session!, repoRoot);
    const byText = (needle: string) => results.find((r) => r.block.body.includes(needle));
    expect(byText("no-such-subcommand")?.status).toBe("failed");
    expect(byText("echo ready")?.status).toBe("passed");
    expect(byText("echo unexpected")?.problems.join()).toMatch(/does not match/);
    expect(byText("after the failure")?.status).toBe("not-reached");
    expect(results.filter((r) => r.status === "skipped")).toHaveLength(1);
  });
});
