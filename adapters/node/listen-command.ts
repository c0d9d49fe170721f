/**
 * `gateway listen <gateway-url> --forward-to <url>`: forwards the gateway's live events to a local
 * app (run-listen.ts runs it; docs/gateway-listen.md).
 */
import { defineCommand } from "citty";

export const listenCommand = defineCommand({
  meta: {
    name: "listen",
    description: "Forward the gateway's live events to a local app, signed, resuming where it stopped",
  },
  args: {
    gateway: { type: "positional", description: "The gateway (http://127.0.0.1:8787)" },
    "forward-to": { type: "string", valueHint: "url", required: true, description: "Your local app's webhook URL" },
    source: { type: "string", valueHint: "id", description: "Only events of this source (repeatable)" },
    type: { type: "string", valueHint: "pattern", description: "Only events of this type, `*` wildcards (repeatable)" },
    filter: { type: "string", valueHint: "json", description: "Only events matching this filter (docs/filters.md)" },
    format: { type: "enum", options: ["cloudevents", "upstream"], default: "cloudevents", description: "Body format" },
    key: {
      type: "string",
      valueHint: "apiKey",
      description: "API key (default: GATEWAY_ADMIN_KEY, alias GATEWAY_API_KEY, then the dev admin key)",
    },
    token: { type: "string", valueHint: "jwt", description: "A stream token instead of an API key" },
    state: { type: "string", valueHint: "file", description: "Cursor and local secret file (default: per target)" },
    "retry-max-ms": {
      type: "string",
      valueHint: "ms",
      default: "30000",
      description: "Longest retry delay to the app",
    },
  },
  // The WebSocket client, src/listen and tracing load when it runs, not for `--help`.
  run: async ({ rawArgs }) => (await import("./run-listen.ts")).runListen(rawArgs),
});
