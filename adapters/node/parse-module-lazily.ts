/**
 * `#parse-module` on Node: acorn (~1 MB of heap, ~3 MB of RSS) is required on the first parse, so
 * a gateway whose config has no transform module never loads it. `require` keeps the config check
 * synchronous (`resolveConfig`); Workers use src/transform/parse-module.ts, which imports it.
 */
import { createRequire } from "node:module";
import type { ModuleNode } from "../../src/transform/parse-module.ts";

export type { ModuleNode };

let acorn: typeof import("acorn") | undefined;

/** Parses `code` as an ES module (latest syntax); throws a SyntaxError with line:column. */
export function parseModule(code: string): { body: ModuleNode[] } {
  acorn ??= createRequire(import.meta.url)("acorn") as typeof import("acorn");
  return acorn.parse(code, { ecmaVersion: "latest", sourceType: "module" }) as unknown as { body: ModuleNode[] };
}
