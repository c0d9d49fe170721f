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

/**
 * Collapses a file graph to a folder graph (`src/stream`, `adapters/node`, ...), without
 * self-edges. A file above that depth (`src/gateway-context.ts`, `src/errors.ts`) is a node of
 * its own: a root file joins no folder, so a folder importing it while it imports that folder
 * is a mutual pair like any other.
 */
export function folderGraph(graph: ReadonlyMap<string, readonly string[]>, depth = 2): Map<string, string[]> {
  const folderOf = (file: string) => {
    const parts = dirname(file).split("/");
    return parts.length < depth ? file : parts.slice(0, depth).join("/");
  };
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const set = folders.get(from) ?? new Set<string>();
    for (const target of targets) if (folderOf(target) !== from) set.add(folderOf(target));
    folders.set(from, set);
  }
  return new Map([...folders].map(([folder, set]) => [folder, [...set].sort()]));
}

/** Every pair of nodes of a folder graph that import each other, as `a <-> b` (a < b). */
export function mutualPairs(folders: ReadonlyMap<string, readonly string[]>): string[] {
  const mutual: string[] = [];
  for (const [from, targets] of folders) {
    for (const to of targets) if (from < to && folders.get(to)?.includes(from)) mutual.push(`${from} <-> ${to}`);
  }
  return mutual.sort();
}

const STATIC_IMPORT = /(import|export)\s+(type\s+)?([^'"]*?)from\s*["']([^"']+)["']/g;
const DYNAMIC_IMPORT = /import\(\s*["']([^"']+)["']\s*\)/g;

/**
 * The relative specifiers a module's text loads at run time: every `import`/`export … from` and
 * `import("…")` except `import type`/`export type` and `import { type A, type B }` (erased at
 * compile time). Comments are ignored.
 */
export function valueImportSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
  const found = new Set<string>();
  for (const match of code.matchAll(STATIC_IMPORT)) {
    const [, , typeOnly, clause = "", spec = ""] = match;
    if (typeOnly) continue;
    const braces = /^\s*\{([^}]*)\}\s*$/.exec(clause);
    const names = braces?.[1]
      ?.split(",")
      .map((name) => name.trim())
      .filter(Boolean);
    if (names && names.length > 0 && names.every((name) => name.startsWith("type "))) continue;
    found.add(spec);
  }
  for (const match of code.matchAll(DYNAMIC_IMPORT)) if (match[1]) found.add(match[1]);
  return [...found].filter((spec) => spec.startsWith("."));
}

/** The files among `files` that load `target` at run time (a value import), given each file's text. */
export function valueImporters(
  files: readonly string[],
  target: string,
  textOf: (file: string) => string = (file) => readFileSync(join(ROOT, file), "utf8"),
): string[] {
  return files.filter((file) =>
    valueImportSpecifiers(textOf(file)).some((spec) => relative(ROOT, resolve(ROOT, dirname(file), spec)) === target),
  );
}
