/**
 * The live hub's config default follows the store (src/config/shared-store-schema.ts): a shared
 * store (`redis`, `upstash`, `postgres`) gets its own journal-backed hub unless `hub` says otherwise, any
 * other store the in-process hub; a shared hub under another store's journal is refused.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../src/config/resolve-config.ts";

const base = () => ({ sources: [{ id: "esign", service: "esign", secrets: ["esign_secret_value_0123456789"] }] });

describe("hub default", () => {
  it.each([
    [{ driver: "disk" }, { driver: "in-process" }],
    [{ driver: "memory" }, { driver: "in-process" }],
    [{ driver: "redis", url: "redis://127.0.0.1:6379" }, { driver: "redis" }],
    [{ driver: "upstash", url: "https://db.example.test" }, { driver: "upstash" }],
    [{ driver: "postgres", url: "postgres://gw@127.0.0.1:5432/gw" }, { driver: "postgres" }],
  ])("store %o gets hub %o", (store, hub) => {
    expect(resolveConfig({ ...base(), store }, {}).hub).toEqual(hub);
  });

  it("keeps a hub the config names, with its options", () => {
    const config = resolveConfig(
      {
        ...base(),
        store: { driver: "upstash", url: "https://db.example.test" },
        hub: { driver: "upstash", pollMs: 50 },
      },
      {},
    );
    expect(config.hub).toEqual({ driver: "upstash", pollMs: 50 });
    const local = resolveConfig({ ...base(), store: { driver: "redis" }, hub: { driver: "in-process" } }, {});
    expect(local.hub).toEqual({ driver: "in-process" });
  });

  it("takes the postgres store's settings, with defaults, and refuses what it cannot use", () => {
    const config = resolveConfig(
      { ...base(), store: { driver: "postgres", url: "${DATABASE_URL}", poolSize: 4 } },
      { DATABASE_URL: "postgresql://gw:pw@db.internal:5432/gw?sslmode=require" },
    );
    expect(config.store).toEqual({
      driver: "postgres",
      url: "postgresql://gw:pw@db.internal:5432/gw?sslmode=require",
      poolSize: 4,
      schema: "gateway",
      leaseSeconds: 30,
    });
    for (const store of [
      { driver: "postgres", url: "mysql://db/gw" },
      { driver: "postgres", schema: "Gateway; DROP" },
      { driver: "postgres", poolSize: 0 },
      { driver: "postgres", ssl: { ca: 1 } },
    ]) {
      expect(() => resolveConfig({ ...base(), store }, {})).toThrow(ConfigError);
    }
  });

  it("refuses a shared hub over another store, naming the field", () => {
    let problems: string[] = [];
    try {
      resolveConfig({ ...base(), store: { driver: "disk" }, hub: { driver: "redis" } }, {});
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      problems = (error as ConfigError).problems;
    }
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^hub\.driver: .*"in-process".*hub "redis" reads the journal of store\.driver "redis"/);
  });
});
