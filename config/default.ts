/**
 * The default configuration: both sources, the embedded SQLite store under `.data/`, and the live
 * stream destination `live` that every event is routed to (`/ws`, `/stream`).
 * Secrets come from the environment; when they are unset, `gateway serve` generates development
 * secrets once, keeps them in `.data/dev-secrets.json` and prints them labelled "development only".
 * The proxy upstreams `esign` and `staffing` take their base URLs and credentials from the
 * environment; a variable that is unset is left out, and that upstream answers 503
 * `upstream_unavailable` (reason `not_configured`) until it is set.
 * In the zero-config sandbox (adapters/node/sandbox.ts, README "Sandbox") the live stream's events
 * of every emulated service are also enriched (route `sandbox-enriched`); nowhere else.
 */
import { defineConfig } from "../src/config/schema.ts";

/** `${NAME}` when the environment sets NAME, else undefined (the field stays unset). */
const fromEnv = (name: string) => (process.env[name] ? `\${${name}}` : undefined);

/**
 * Services whose upstream the sandbox emulates (set by adapters/node/sandbox.ts, never by hand):
 * their events reach the live stream enriched with the agreement or staffing request, fetched
 * fresh for each event (`ttlSeconds: 0`, so `agreement.completed` shows `status: completed`).
 * A real upstream is never asked per event by default: outside the sandbox no route enriches.
 */
const emulated = (process.env.GATEWAY_SANDBOX_SERVICES ?? "").split(",").filter(Boolean);

export default defineConfig({
  server: { host: "127.0.0.1", port: 8787 },
  store: { driver: "sqlite", dir: ".data" },
  sources: [
    { id: "esign", service: "esign", secrets: ["${ESIGN_WEBHOOK_SECRET}"] },
    { id: "staffing", service: "staffing", secrets: ["${STAFFING_WEBHOOK_SECRET}"] },
  ],
  admin: { apiKeyHashes: ["${GATEWAY_ADMIN_KEY_HASH}"] },
  destinations: [{ id: "live", type: "stream" }],
  routes: [
    ...(emulated.length > 0
      ? [
          {
            id: "sandbox-enriched",
            services: emulated,
            destinations: ["live"],
            enrich: { ttlSeconds: 0, timeoutMs: 5000 },
          },
        ]
      : []),
    { id: "all-to-live", types: ["*"], destinations: ["live"] },
  ],
  // The admin key may also watch the live stream (it can read the event log anyway), so that
  // `npm start` has a working /ws and /stream out of the box.
  // In the sandbox (emulated upstreams, see adapters/node/sandbox.ts) it may also call the proxy.
  clients: [
    {
      id: "admin",
      apiKeyHashes: ["${GATEWAY_ADMIN_KEY_HASH}"],
      scopes: { stream: {}, ...(process.env.GATEWAY_SANDBOX === "1" ? { proxy: [{ upstream: "*" }] } : {}) },
    },
  ],
  // Signs the tokens of POST /auth/stream-token (and verifies HS256 client tokens) when set.
  auth: { jwt: { hs256Secret: fromEnv("GATEWAY_JWT_SECRET") } },
  upstreams: [
    {
      id: "esign",
      service: "esign",
      baseUrl: fromEnv("ESIGN_API_URL"),
      clientId: fromEnv("ESIGN_CLIENT_ID"),
      clientSecret: fromEnv("ESIGN_CLIENT_SECRET"),
    },
    { id: "staffing", service: "staffing", baseUrl: fromEnv("STAFFING_API_URL"), apiKey: fromEnv("STAFFING_API_KEY") },
  ],
  retentionDays: 30,
});
