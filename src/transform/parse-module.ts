/**
 * Parses a transform module with acorn. This is the `#parse-module` import everywhere but Node
 * (package.json "imports"); on Node, adapters/node/parse-module-lazily.ts loads acorn on first use.
 */
import { parse } from "acorn";

/** A node of the module's syntax tree, as far as module-source.ts reads it. */
export type ModuleNode = { type: string; start: number; end: number } & Record<string, unknown>;

/** Parses `code` as an ES module (latest syntax); throws a SyntaxError with line:column. */
export function parseModule(code: string): { body: ModuleNode[] } {
  return parse(code, { ecmaVersion: "latest", sourceType: "module" }) as unknown as { body: ModuleNode[] };
}
