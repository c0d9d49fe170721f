/**
 * Reads the static import graph of the gateway's own TypeScript files (`src/`, `adapters/`):
 * every `import … from "./x.ts"`, `export … from`, and `import("./x.ts")` with a relative
 * specifier. Used by import-circles.test.ts and the registry/service layout tests.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** Repository root (this file lives in test/architecture/). */
export const ROOT = resolve(import.meta.dirname, "../..");

const SPECIFIER = /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Every `.ts` file under `dirs`, as paths relative to the root. */
export function listSourceFiles(dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(path);
    }
  };
  for (const dir of dirs) walk(dir);
  return out.sort();
}

/** The relative imports of one file, resolved to root-relative paths. Type-only imports count too. */
export function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const found = new Set<string>();
  for (const match of text.matchAll(SPECIFIER)) {
    const spec = match[1] ?? match[2];
    if (!spec?.startsWith(".")) continue;
    found.add(relative(ROOT, resolve(ROOT, dirname(file), spec)));
  }
  return [...found];
}

/** The import graph of `files`: file -> imported files among them. */
export function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  return new Map(files.map((file) => [file, importsOf(file).filter((target) => known.has(target))]));
}

/** Every elementary cycle reachable by DFS, each reported once as a path `a -> b -> a`. */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const seen = state.get(next);
      if (seen === "open") cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (seen === undefined) visit(next);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

/** Collapses a file graph to a folder graph (`src/stream`, `adapters/node`, ...), without self-edges. */
export function folderGraph(graph: ReadonlyMap<string, readonly string[]>, depth = 2): Map<string, string[]> {
  const folderOf = (file: string) => dirname(file).split("/").slice(0, depth).join("/");
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const set = folders.get(from) ?? new Set<string>();
    for (const target of targets) if (folderOf(target) !== from) set.add(folderOf(target));
    folders.set(from, set);
  }
  return new Map([...folders].map(([folder, set]) => [folder, [...set].sort()]));
}
