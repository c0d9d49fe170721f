/**
 * The layout rules of docs/architecture.md, checked on the import graph of src/, adapters/ and
 * emulators/: no file imports itself through others (no circle), no two folders import each
 * other, and no file outside src/services/ names an upstream service except the configuration
 * defaults and the emulators.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { findCycles, folderGraph, importGraph, listSourceFiles, ROOT } from "./import-graph.ts";

const files = listSourceFiles(["src", "adapters", "emulators"]);
const graph = importGraph(files);

describe("import graph", () => {
  it("has no circle between files", () => {
    expect(findCycles(graph).map((cycle) => cycle.join(" -> "))).toEqual([]);
  });

  it("has no two folders importing each other", () => {
    // Files directly in src/ (the composition root and the shared context) are left out: they
    // join the folders by design.
    const inFolders = new Map(
      [...graph]
        .filter(([file]) => dirname(file) !== "src")
        .map(([file, targets]) => [file, targets.filter((target) => dirname(target) !== "src")]),
    );
    const folders = folderGraph(inFolders);
    const mutual: string[] = [];
    for (const [from, targets] of folders) {
      for (const to of targets) if (from < to && folders.get(to)?.includes(from)) mutual.push(`${from} <-> ${to}`);
    }
    expect(mutual).toEqual([]);
  });

  it("finds a circle when there is one (the checker itself works)", () => {
    const cycles = findCycles(
      new Map([
        ["a", ["b"]],
        ["b", ["c"]],
        ["c", ["a"]],
        ["d", []],
      ]),
    );
    expect(cycles).toEqual([["a", "b", "c", "a"]]);
  });
});

describe("upstream services stay in src/services/", () => {
  // Configuration defaults and dev-secret wiring name the two built-in sources.
  const ALLOWED = new Set([
    "adapters/cloudflare/worker.ts",
    "adapters/cloudflare/worker-config.ts",
    "adapters/node/dev-secrets.ts",
  ]);

  it("no other runtime code names a service", () => {
    const offenders = files.filter((file) => {
      // emulators/ is per service by nature (one emulated upstream per folder, like the test tree);
      // the code serving them reaches them only through emulators/registry.ts.
      if (file.startsWith("src/services/") || file.startsWith("emulators/") || ALLOWED.has(file)) return false;
      return /\b(esign|staffing)\b/i.test(
        readFileSync(join(ROOT, file), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ""),
      );
    });
    expect(offenders).toEqual([]);
  });
});
