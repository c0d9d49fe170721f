/**
 * The order of the Node suite (test/helpers/longest-first-sequencer.ts): the longest files of the
 * committed table first, files the table does not know before all of them, ties in path order;
 * the same files in any input order give the same order. And the table holds measured times of
 * test files (an entry for a file renamed since is harmless: the renamed file counts as new).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { TestSpecification, Vitest } from "vitest/node";
import table from "../file-durations.json" with { type: "json" };
import { LongestFirstSequencer } from "../helpers/longest-first-sequencer.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const seconds: Record<string, number> = table.seconds;

/** What the sequencer reads of a specification: its file. */
const spec = (path: string) => ({ moduleId: join(root, path) }) as unknown as TestSpecification;
const sequencer = new LongestFirstSequencer({ config: { root } } as unknown as Vitest);
const order = async (paths: string[]) =>
  (await sequencer.sort(paths.map(spec))).map((s) => s.moduleId.slice(root.length).replace(/^\//, ""));

describe("longest-first order of the Node suite", () => {
  const known = Object.entries(seconds).sort((a, b) => b[1] - a[1]);
  const [longest, second] = known;
  const shortest = known.at(-1);

  it("starts the longest known files first, unknown (new) files before them, ties by path", async () => {
    expect(longest && second && shortest).toBeTruthy();
    const input = [shortest![0], "test/zz/new-b.test.ts", second![0], longest![0], "test/zz/new-a.test.ts"];
    const expected = ["test/zz/new-a.test.ts", "test/zz/new-b.test.ts", longest![0], second![0], shortest![0]];
    if (longest![1] === second![1]) expected.splice(2, 2, ...[longest![0], second![0]].sort());
    expect(await order(input)).toEqual(expected);
    expect(await order([...input].reverse())).toEqual(expected);
  });

  it("orders every file of the table by its time, never a shorter one before a longer one", async () => {
    const sorted = await order(Object.keys(seconds));
    for (let i = 1; i < sorted.length; i++) {
      expect(seconds[sorted[i - 1]!]! >= seconds[sorted[i]!]!, `${sorted[i - 1]} before ${sorted[i]}`).toBe(true);
    }
  });

  it("the committed table holds a measured time for most test files", () => {
    expect(Object.keys(seconds).length).toBeGreaterThan(50);
    let present = 0;
    for (const [path, s] of Object.entries(seconds)) {
      expect(path).toMatch(/^test\/.+\.test\.ts$/);
      expect(Number.isInteger(s) && s >= 1, `${path}: ${s}`).toBe(true);
      if (existsSync(join(root, path))) present++;
    }
    expect(present).toBeGreaterThan(50);
  });
});
