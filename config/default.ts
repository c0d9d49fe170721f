/**
 * The default configuration: both sources, the embedded disk store under `.data/`, and the live
 * stream destination `live` that every event is routed to (`/ws`, `/stream`).
 * Secrets come from the environment; when they are unset, `gateway serve` generates development
 * secrets once, keeps them in `.data/dev-secrets.json` and prints them labelled "development only".
 */
import { defineConfig } from "../src/config/schema.ts";

export default defineConfig({
  server: { host: "127.0.0.1", port: 8787 },
  store: { driver: "disk", dir: ".data" },
  sources: [
    { id: "esign", service: "esign", secrets: ["${ESIGN_WEBHOOK_SECRET}"] },
    { id: "staffing", service: "staffing", secrets: ["${STAFFING_WEBHOOK_SECRET}"] },
  ],
  admin: { apiKeyHashes: ["${GATEWAY_ADMIN_KEY_HASH}"] },
  destinations: [{ id: "live", type: "stream" }],
  routes: [{ id: "all-to-live", types: ["*"], destinations: ["live"] }],
  retentionDays: 30,
});
