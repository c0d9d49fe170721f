/**
 * `npm run bench -- --help` lists the cases and runs nothing; an unknown case or option is
 * refused (exit 64) before any case starts. Runs bench/run.ts as the npm script does.
 */
import { describe, expect, it } from "vitest";
import { runNode } from "./cli-fixtures.ts";

const bench = (...args: string[]) => runNode(["--import", "tsx", "bench/run.ts", ...args]);
const CASES = ["ingress", "proxy", "fanout", "filters", "live", "hostile", "scaleout", "scale", "worker"];

describe("bench runner", () => {
  it("--help lists every case, runs none, exit 0", async () => {
    const run = await bench("--help");
    expect(run.code).toBe(0);
    for (const name of CASES) expect(run.stdout).toMatch(new RegExp(`^ {2}${name} +\\S`, "m"));
    expect(run.stdout).not.toContain("===");
  });

  it.each([
    [["ingress", "nope"], 'bench: unknown bench case "nope"'],
    [["--fast"], 'bench: unknown option "--fast"'],
  ])("%j is refused before anything runs (exit 64)", async (args, line) => {
    const run = await bench(...args);
    expect(run.code).toBe(64);
    expect(run.stderr.split("\n")[0]).toBe(line);
    expect(run.stdout).not.toContain("=== ingress");
  });
});
