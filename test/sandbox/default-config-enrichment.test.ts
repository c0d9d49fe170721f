/**
 * Which routes of the default configuration (config/default.ts) enrich: only the sandbox's, for
 * the services the sandbox emulates (adapters/node/sandbox.ts sets `GATEWAY_SANDBOX_SERVICES`).
 * With real upstream credentials and no sandbox, no route asks a real upstream per event.
 */
import { afterEach, expect, test, vi } from "vitest";

const DEFAULT_CONFIG = "../../config/default.ts";
const saved = { ...process.env };

afterEach(() => {
  process.env = { ...saved };
  vi.resetModules();
});

/** The default config's routes as the environment `env` makes them (a fresh module load). */
async function routesWith(env: Record<string, string>) {
  for (const name of Object.keys(process.env)) if (/^(ESIGN_|STAFFING_|GATEWAY_)/.test(name)) delete process.env[name];
  Object.assign(process.env, env);
  vi.resetModules();
  const config = (await import(DEFAULT_CONFIG)).default as {
    routes: { id: string; services?: string[]; enrich?: unknown }[];
  };
  return config.routes;
}

test("outside the sandbox no default route enriches, even with real upstream credentials", async () => {
  const routes = await routesWith({
    ESIGN_API_URL: "https://esign.example.com/api/v1",
    ESIGN_CLIENT_ID: "id",
    ESIGN_CLIENT_SECRET: "secret",
    STAFFING_API_URL: "https://staffing.example.com/v1",
    STAFFING_API_KEY: "sk_live_x",
  });
  expect(routes.map((r) => r.id)).toEqual(["all-to-live"]);
  expect(routes.some((r) => r.enrich !== undefined)).toBe(false);
});

test("in the sandbox, events of the emulated services only are enriched, fetched afresh each time", async () => {
  const routes = await routesWith({ GATEWAY_SANDBOX: "1", GATEWAY_SANDBOX_SERVICES: "staffing" });
  expect(routes[0]).toMatchObject({
    id: "sandbox-enriched",
    services: ["staffing"],
    enrich: { ttlSeconds: 0 },
  });
  expect(routes.filter((r) => r.enrich !== undefined)).toHaveLength(1);
});
