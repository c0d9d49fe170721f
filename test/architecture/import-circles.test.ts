/**
 * The layout rules of docs/architecture.md, checked on the import graph of src/, adapters/ and
 * emulators/: no file imports itself through others (no circle), no two folders import each
 * other (a file at the root of src/ counts as a folder of its own), src/errors.ts imports
 * nothing of the gateway (the lowest layer), the built-in service registry is loaded only where
 * the configuration and the composition roots wire it, and no file outside src/services/ names
 * an upstream service except the configuration defaults and the emulators.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  findCycles,
  folderGraph,
  importGraph,
  listSourceFiles,
  mutualPairs,
  ROOT,
  valueImporters,
} from "./import-graph.ts";

const files = listSourceFiles(["src", "adapters", "emulators"]);
const graph = importGraph(files);

describe("import graph", () => {
  it("has no circle between files", () => {
    expect(findCycles(graph).map((cycle) => cycle.join(" -> "))).toEqual([]);
  });

  it("has no two folders importing each other (root files of src/ each a node of their own)", () => {
    expect(mutualPairs(folderGraph(graph))).toEqual([]);
  });

  it("finds two folders importing each other through a root file (the checker itself works)", () => {
    // A module of src/auth typing its argument as the whole context, which names src/auth.
    const planted = new Map([
      ["src/gateway-context.ts", ["src/auth/authenticate-client.ts", "src/errors.ts"]],
      ["src/auth/admin-auth.ts", ["src/gateway-context.ts", "src/errors.ts"]],
      ["src/auth/authenticate-client.ts", []],
      ["src/errors.ts", []],
    ]);
    expect(mutualPairs(folderGraph(planted))).toEqual(["src/auth <-> src/gateway-context.ts"]);
  });

  it("keeps src/errors.ts the lowest layer: it imports nothing of the gateway", () => {
    expect(lowestLayerImports(graph)).toEqual([]);
  });

  it("finds an import of src/errors.ts (the checker itself works)", () => {
    const planted = new Map([
      ["src/errors.ts", ["src/http/client-address.ts"]],
      ["src/http/client-address.ts", []],
    ]);
    expect(lowestLayerImports(planted)).toEqual(["src/http/client-address.ts"]);
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

/** What src/errors.ts imports of the gateway's own files (must be nothing). */
function lowestLayerImports(files: ReadonlyMap<string, readonly string[]>): string[] {
  return [...(files.get("src/errors.ts") ?? [])];
}

describe("the built-in service registry is wired, not reached for", () => {
  const REGISTRY = "src/services/registry.ts";
  // Where `builtinServices` may be loaded besides src/config/ and src/services/, and why.
  const WIRING = new Set([
    // Composition roots: the configured registry of a gateway, a listener, the emulators; the
    // Node and Workers entries hand it to the store they open (src/store takes it injected).
    "src/build-gateway-context.ts",
    "adapters/node/run-listen.ts",
    "adapters/node/start-gateway.ts",
    "adapters/cloudflare/worker-env.ts",
    "emulators/shared/service-signer.ts",
    // Defaults of entry points callers may use without a registry (their tests call them so).
    "src/events/normalize-event.ts",
    "src/ingress/verify-webhook.ts",
    "src/samples/sample-webhooks.ts",
    // Every service's mail templates, merged once.
    "src/delivery/email/default-templates.ts",
  ]);
  const allowed = (file: string) =>
    file.startsWith("src/config/") || file.startsWith("src/services/") || WIRING.has(file);

  it("no other module loads src/services/registry.ts (type imports are free)", () => {
    expect(valueImporters(files, REGISTRY).filter((file) => !allowed(file))).toEqual([]);
  });

  it("finds a value import of the registry and lets a type import pass (the checker itself works)", () => {
    const texts = new Map([
      ["src/proxy/planted.ts", 'import { builtinServices } from "../services/registry.ts";\n'],
      // The store takes the services injected (issue 33 row 7): reaching for them again fails.
      ["src/store/match-event-query.ts", 'import { builtinServices } from "../services/registry.ts";\n'],
      ["adapters/store/memory.ts", 'import { builtinServices } from "../../src/services/registry.ts";\n'],
      ["src/proxy/mixed.ts", 'import { type X, builtinServices } from "../services/registry.ts";\n'],
      ["src/proxy/lazy.ts", 'const m = await import("../services/registry.ts");\n'],
      ["src/proxy/typed.ts", 'import type { X } from "../services/registry.ts";\n'],
      ["src/proxy/typed-names.ts", 'import { type X, type Y } from "../services/registry.ts";\n'],
      ["src/proxy/commented.ts", '// import { builtinServices } from "../services/registry.ts";\n'],
      ["src/config/schema-like.ts", 'import { builtinServices } from "../services/registry.ts";\n'],
    ]);
    const found = valueImporters([...texts.keys()], REGISTRY, (file) => texts.get(file) ?? "");
    expect(found.filter((file) => !allowed(file))).toEqual([
      "src/proxy/planted.ts",
      "src/store/match-event-query.ts",
      "adapters/store/memory.ts",
      "src/proxy/mixed.ts",
      "src/proxy/lazy.ts",
    ]);
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
