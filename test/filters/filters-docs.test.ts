/**
 * The examples of docs/filters.md are real: every `json config` block is a complete
 * configuration the real schema accepts, every JSON block parses, the filter and dialect
 * examples are valid filters, and the documented start-up error is the one the schema gives.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../src/config/resolve-config.ts";
import { parseEventFilter } from "../../src/filters/event-filter.ts";

const page = readFileSync(new URL("../../docs/filters.md", import.meta.url), "utf8");
const blocks = [...page.matchAll(/```([^\n]*)\n([\s\S]*?)```/g)].map((m) => ({
  info: m[1] as string,
  text: m[2] as string,
}));
// Secrets from the environment, as the page's configs expect: a valid whsec_ value for each.
const WHSEC = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
const env = new Proxy({} as Record<string, string>, { get: () => WHSEC });

describe("docs/filters.md", () => {
  it("every json config block is a complete, valid configuration", () => {
    const configs = blocks.filter((b) => b.info === "json config");
    expect(configs.length).toBeGreaterThan(0);
    for (const block of configs) expect(() => resolveConfig(JSON.parse(block.text), env)).not.toThrow();
  });

  it("every json block parses; the filter examples are valid filters and match the sample document", () => {
    const json = blocks.filter((b) => b.info === "json").map((b) => JSON.parse(b.text));
    const [document, filter, dialects, subscribe, , , replay] = json;
    const compiled = parseEventFilter({ filter });
    expect(compiled.ok).toBe(true);
    const withAgent = { ...document, headers: { ...document.headers, "user-agent": "esign-webhooks/1.0" } };
    expect(compiled.ok && compiled.filter?.matches({ event: withAgent, headers: withAgent.headers })).toBe(true);
    const dialect = parseEventFilter({ filters: dialects });
    expect(dialect.ok && dialect.filter?.matches({ event: document, headers: document.headers })).toBe(true);
    expect(parseEventFilter({ filter: subscribe.filter.filter }).ok).toBe(true);
    expect(parseEventFilter({ filter: replay.filter }).ok).toBe(true);
  });

  it("the documented start-up error is the schema's", () => {
    const shown = blocks.find((b) => b.text.startsWith("invalid configuration:"))?.text.trim();
    const raw = {
      sources: [{ id: "esign", service: "esign", secrets: ["whsec_MDEyMzQ1Njc4OQ=="] }],
      destinations: [{ id: "live", type: "stream" }],
      routes: [0, 1, 2]
        .map(() => ({ destinations: ["live"] }))
        .concat([{ filter: { data: { amount: { $gtx: 100 } } }, destinations: ["live"] } as never]),
    };
    let message = "";
    try {
      resolveConfig(raw, {});
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toBe(shown);
  });
});
