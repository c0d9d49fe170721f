/**
 * What a reload reports and refuses (src/config/config-changes.ts): start-only settings by field
 * path, ids added, removed and changed per list, never a value; key order is not a change.
 */
import { expect, test } from "vitest";
import { describeConfigChanges } from "../../src/config/config-changes.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";

const env = {
  S1: "source-secret-0123456789",
  S2: "source-secret-9876543210",
  W: "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3",
};
const base = {
  server: { host: "127.0.0.1", port: 8787 },
  store: { driver: "memory" },
  sources: [{ id: "esign", service: "esign", secrets: ["${S1}"] }],
  destinations: [
    { id: "crm", type: "http", url: "https://crm.example.com/hook", secrets: ["${W}"] },
    { id: "live", type: "stream" },
  ],
  routes: [{ destinations: ["crm", "live"] }],
};
const resolve = (raw: unknown) => resolveConfig(raw, env);

test("the same file, keys in another order, is no change", () => {
  const reordered = JSON.parse(JSON.stringify(base), (_key, value) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).reverse())
      : value,
  );
  expect(describeConfigChanges(resolve(base), resolve(reordered))).toMatchObject({ none: true, fixed: [] });
});

test("start-only settings are named by path; the rest by id, without values", () => {
  const next = resolve({
    ...base,
    server: { host: "0.0.0.0", port: 9000 },
    store: { driver: "memory" },
    sources: [{ id: "esign", service: "esign", secrets: ["${S2}"] }],
    destinations: [base.destinations[1], { id: "audit", type: "stream" }],
    routes: [{ destinations: ["live", "audit"] }],
    retentionDays: 7,
  });
  const changes = describeConfigChanges(resolve(base), next);
  expect(changes.fixed.sort()).toEqual(["server.host", "server.port"]);
  expect(changes.lists).toEqual({
    sources: { added: [], removed: [], changed: ["esign"] },
    destinations: { added: ["audit"], removed: ["crm"], changed: [] },
    routes: { added: [], removed: [], changed: ["#0"] },
  });
  expect(changes.settings).toEqual(["retentionDays"]);
  expect(JSON.stringify(changes)).not.toContain(env.S2);
  expect(JSON.stringify(changes)).not.toContain(env.S1);
});

test("a store or hub change is refused by its field", () => {
  const changes = describeConfigChanges(
    resolve(base),
    resolve({ ...base, store: { driver: "sqlite", dir: "/tmp/x" } }),
  );
  expect(changes.fixed).toContain("store.driver");
  expect(changes.fixed).toContain("store.dir");
});
