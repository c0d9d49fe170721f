/**
 * checkConfig (src/config/check-config.ts), the one check `serve`, `validate` and the Worker
 * share: every problem at once, each by its field path (a missing variable once, not again as
 * a too-short value), unset and empty told apart, nothing generated in place of a missing
 * secret, and warnings only for a valid config.
 */
import { describe, expect, it } from "vitest";
import { checkConfig } from "../../src/config/check-config.ts";

const SECRET = "esign_secret_value_0123456789";

describe("checkConfig", () => {
  it("lists every problem by field path: variables, schema and cross-references together", () => {
    const result = checkConfig(
      {
        sources: [
          { id: "esign", service: "esign", secrets: ["${ESIGN_WEBHOOK_SECRET}"] },
          { id: "staffing", service: "staffing", secrets: ["${STAFFING_WEBHOOK_SECRET}"], toleranceSeconds: "5" },
        ],
        destinations: [{ id: "live", type: "stream" }],
        routes: [{ destinations: ["live", "crm"] }],
      },
      { STAFFING_WEBHOOK_SECRET: "" },
    );
    expect(result.config).toBeUndefined();
    expect(result.problems).toEqual([
      "sources.0.secrets.0: environment variable ESIGN_WEBHOOK_SECRET is not set",
      "sources.1.secrets.0: environment variable STAFFING_WEBHOOK_SECRET is empty",
      expect.stringMatching(/^sources\.1\.toleranceSeconds: /),
      'routes.0.destinations.1: expected the id of a configured destination (no destination "crm")',
    ]);
    expect(result.warnings).toEqual([]);
  });

  it("never fills a missing secret: the field stays a problem whatever else is set", () => {
    const result = checkConfig({ sources: [{ id: "esign", service: "esign", secrets: ["${X}"] }] }, { Y: SECRET });
    expect(result.problems).toEqual(["sources.0.secrets.0: environment variable X is not set"]);
  });

  it("a valid config: the config with its defaults, and warnings for what it probably did not mean", () => {
    const result = checkConfig(
      {
        store: { driver: "memory" },
        sources: [{ id: "esign", service: "esign", secrets: ["${ESIGN_WEBHOOK_SECRET}"] }],
        destinations: [{ id: "live", type: "stream" }],
        upstreams: [{ id: "esign", service: "esign" }],
      },
      { ESIGN_WEBHOOK_SECRET: SECRET },
    );
    expect(result.problems).toEqual([]);
    expect(result.config?.sources[0]?.secrets).toEqual([SECRET]);
    expect(result.warnings).toEqual([
      "store.driver: memory keeps events in this process only; a restart loses them",
      "admin.apiKeyHashes: none, so no admin key can read the event log, metrics or the console",
      'destinations.0: no route names "live", so it receives nothing',
      expect.stringMatching(/^upstreams\.0: baseUrl, .* unset, so \/api\/esign\/ answers 503/),
    ]);
  });
});
