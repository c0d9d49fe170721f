/**
 * Turns a transform module into the factory the sandbox compiles once per version: a function
 * that runs the module's top level and returns its default export. Each call runs the factory
 * anew, so module-level variables never carry state from one event to the next.
 */
import { type ModuleNode, parseModule } from "#parse-module";

/** The binding the rewritten module assigns its default export to. */
const DEFAULT_BINDING = "__gateway_transform_default__";

type Node = ModuleNode;

export type FactorySource = { ok: true; source: string } | { ok: false; message: string };

/** Parses `code` as an ES module; on success the factory's source, else why not (with line:column). */
export function toFactorySource(code: string): FactorySource {
  let program: { body: Node[] };
  try {
    program = parseModule(code);
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  // Edits as [start, end, replacement], applied back to front so earlier offsets stay valid.
  const edits: [number, number, string][] = [];
  let hasDefault = false;
  for (const node of program.body) {
    if (node.type === "ImportDeclaration" || node.type === "ExportAllDeclaration") {
      return { ok: false, message: "a transform cannot import other modules" };
    }
    if (node.type === "ExportDefaultDeclaration") {
      hasDefault = true;
      const declaration = node.declaration as Node & { id?: { name: string } | null };
      const named =
        (declaration.type === "FunctionDeclaration" || declaration.type === "ClassDeclaration") && declaration.id;
      if (named) {
        // Keep the declaration (it is hoisted and callable by name); export it at the end.
        edits.push([node.start, declaration.start, ""]);
        edits.push([node.end, node.end, `\n${DEFAULT_BINDING} = ${declaration.id?.name};`]);
      } else {
        edits.push([node.start, declaration.start, `${DEFAULT_BINDING} = `]);
        edits.push([node.end, node.end, ";"]);
      }
    } else if (node.type === "ExportNamedDeclaration") {
      if (node.source) return { ok: false, message: "a transform cannot import other modules" };
      const declaration = node.declaration as Node | null;
      if (declaration) {
        edits.push([node.start, declaration.start, ""]);
        continue;
      }
      const specifiers = node.specifiers as { local: { name?: string }; exported: { name?: string; value?: string } }[];
      const asDefault = specifiers.find((s) => (s.exported.name ?? s.exported.value) === "default");
      if (asDefault) hasDefault = true;
      edits.push([node.start, node.end, asDefault ? `${DEFAULT_BINDING} = ${asDefault.local.name};` : ""]);
    }
  }
  if (!hasDefault) return { ok: false, message: "the module has no default export" };
  let body = code;
  for (const [start, end, text] of edits.sort((a, b) => b[0] - a[0] || b[1] - a[1])) {
    body = body.slice(0, start) + text + body.slice(end);
  }
  // One line of prefix, on the module's first line, so error positions keep the module's lines.
  return {
    ok: true,
    source: `(function () { "use strict"; let ${DEFAULT_BINDING}; ${body}\n;return ${DEFAULT_BINDING}; })`,
  };
}

/** Undefined when `code` is a usable transform module, else what is wrong with it. */
export function checkTransformModule(code: string): string | undefined {
  const factory = toFactorySource(code);
  return factory.ok ? undefined : factory.message;
}
