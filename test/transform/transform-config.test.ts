/**
 * The `transform` option as a configuration file gives it: exactly one of code, file or builtin;
 * limits within bounds; a module that does not parse or has no default export stops start-up
 * naming the field; `relay` mode refuses a transform; `${name}` in a module stays code; and the
 * Node loader reads `file` relative to the config file.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfigFile } from "../../adapters/node/load-config.ts";
import { ConfigError, resolveConfig } from "../../src/config/resolve-config.ts";

const WHSEC = `whsec_${Buffer.from("transform-config-test-secret-01").toString("base64")}`;
const base = (transform: unknown, extra: Record<string, unknown> = {}) => ({
  sources: [{ id: "esign", service: "esign", secrets: ["esign-secret-0123456789"] }],
  destinations: [{ id: "hook", type: "http", url: "https://example.com/hook", secrets: [WHSEC], transform, ...extra }],
  routes: [{ destinations: ["hook"] }],
});

function problemsOf(raw: unknown): string[] {
  try {
    resolveConfig(raw, {});
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("transform configuration", () => {
  it("applies the default limits", () => {
    const config = resolveConfig(base({ builtin: "slack" }), {});
    expect(config.destinations[0]).toMatchObject({ transform: { builtin: "slack", timeoutMs: 50, memoryLimitMb: 16 } });
  });

  it.each([
    [{}, "destinations.0.transform: expected exactly one of code, file or builtin"],
    [{ builtin: "slack", code: "export default () => null" }, "destinations.0.transform: expected exactly one of"],
    [{ builtin: "irc" }, "destinations.0.transform.builtin: expected one of slack, teams, discord"],
    [{ builtin: "slack", timeoutMs: 1001 }, "destinations.0.transform.timeoutMs"],
    [
      { code: "export default (e) => {" },
      "destinations.0.transform.code: expected a JavaScript module with a default export (Unexpected token (1:23))",
    ],
    [
      { code: "export const x = 1;" },
      "destinations.0.transform.code: expected a JavaScript module with a default export (the module has no default export)",
    ],
    [{ code: 'import x from "y"; export default x;' }, "a transform cannot import other modules"],
    [{ file: "transform.js" }, "destinations.0.transform.file: expected a file the Node CLI reads"],
  ])("refuses %j", (transform, problem) => {
    expect(problemsOf(base(transform)).join("\n")).toContain(problem);
  });

  it("refuses a transform in relay mode", () => {
    expect(problemsOf(base({ builtin: "slack" }, { mode: "relay" }))).toEqual([
      "destinations.0.transform: expected no transform in relay mode (relay forwards the upstream's body unchanged; use mode cloudevent)",
    ]);
  });

  it("keeps ${name} in a module as code (no environment lookup)", () => {
    const code = "export default (event) => ({ text: `${event.type} for ${subject}` });";
    const config = resolveConfig(base({ code }), {});
    expect(config.destinations[0]).toMatchObject({ transform: { code } });
  });

  it("reads a transform file relative to the config file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "gw-transform-config-"));
    await writeFile(join(dir, "to-chat.js"), "export default (event) => ({ text: event.type });");
    await writeFile(join(dir, "gateway.json"), JSON.stringify(base({ file: "to-chat.js" })));
    const config = resolveConfig(await loadConfigFile(join(dir, "gateway.json")), {});
    expect(config.destinations[0]).toMatchObject({
      transform: { file: "to-chat.js", code: "export default (event) => ({ text: event.type });" },
    });
    await writeFile(join(dir, "missing.json"), JSON.stringify(base({ file: "nope.js" })));
    await expect(loadConfigFile(join(dir, "missing.json"))).rejects.toThrow(
      "destinations.0.transform.file: cannot read nope.js (ENOENT)",
    );
  });
});
