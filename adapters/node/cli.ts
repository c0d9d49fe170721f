/**
 * The `gateway` command line:
 *   gateway serve [--config file.ts|file.json] [--host h] [--port p]
 *   gateway trigger <sourceId> <eventType> [--url u] [--config f] [--times n] [--id unique]
 *   gateway hash-key <apiKey>
 *   gateway emulate [--host h] [--port 8788] [--time-scale 1] [--only <service>]
 *   gateway listen <gateway-url> --forward-to <url> [...] (listen-command.ts)
 *   gateway transform test <file|builtin> --event <id> [--url] [--key] (transform-command.ts)
 */
import { createHash } from "node:crypto";
import { parseArgs } from "node:util";
import { runMain } from "citty";
import { ConfigError, resolveConfig } from "../../src/config/resolve-config.ts";
import type { GatewayConfig } from "../../src/config/schema.ts";
import { buildSampleDelivery, sampleEventTypes } from "../../src/samples/sample-webhooks.ts";
import { applyDevSecrets } from "./dev-secrets.ts";
import { emulateCommand } from "./emulate-command.ts";
import { LISTEN_USAGE, ListenUsageError, listenCommand } from "./listen-command.ts";
import { loadConfigFile } from "./load-config.ts";
import { createNodeCrypto } from "./node-crypto.ts";
import { describeEmulators, startSandbox } from "./sandbox.ts";
import { startNodeGateway } from "./start-gateway.ts";
import { transformCommand } from "./transform-command.ts";

const USAGE = `usage:
  gateway serve [--config file.ts|file.json] [--host 127.0.0.1] [--port 8787]
  gateway trigger <sourceId> <eventType> [--url http://127.0.0.1:8787] [--config file] [--times 1] [--id unique]
  gateway hash-key <apiKey>
  gateway emulate [--host 127.0.0.1] [--port 8788] [--time-scale 1] [--only esign|staffing]
  ${LISTEN_USAGE}
  gateway transform test <file|slack|teams|discord> --event <gateway event id> [--url http://127.0.0.1:8787] [--key k]`;

/** Loads, env-interpolates (dev secrets fill the gaps) and validates the configuration. */
async function loadConfig(path: string | undefined) {
  const raw = await loadConfigFile(path);
  const env = { ...process.env };
  const dataDir = dataDirOf(raw);
  const dev = dataDir ? await applyDevSecrets(env, dataDir, raw) : { filled: [], secrets: undefined };
  return { config: resolveConfig(raw, env), dev };
}

/** The sqlite (alias disk) store directory named by a raw config, if any (where dev secrets are kept). */
function dataDirOf(raw: unknown): string | undefined {
  const store = (raw as { store?: { driver?: string; dir?: string } } | undefined)?.store;
  if (!store || store.driver === "disk" || store.driver === "sqlite") return store?.dir ?? ".data";
  return undefined;
}

async function serveCommand(args: string[]) {
  const { values } = parseArgs({
    args,
    options: { config: { type: "string" }, host: { type: "string" }, port: { type: "string" } },
  });
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
    throw new ConfigError([`--port: expected an integer 0..65535, received ${values.port}`]);
  }
  // Zero configuration: emulated upstreams (README, Sandbox), set up before the default config loads.
  const sandbox =
    values.config === undefined
      ? await startSandbox(process.env, {
          dataDir: ".data",
          gatewayPort: port ?? 8787,
          host: values.host ?? "127.0.0.1",
        })
      : undefined;
  const { config, dev } = await loadConfig(values.config);
  const running = await startNodeGateway({
    config,
    host: values.host,
    port,
    development: developmentMode(config, dev, values.host),
  });
  printBanner(running.url, config, dev);
  if (sandbox) {
    sandbox.wire(running.url);
    console.log(describeEmulators(sandbox.emulators));
  }
  let signals = 0;
  const shutdown = (signal: string) => {
    if (++signals > 1) process.exit(130);
    console.log(JSON.stringify({ time: new Date().toISOString(), level: "info", msg: "shutting down", signal }));
    running
      .stop()
      .then(() => sandbox?.close())
      .then(
        () => process.exit(0),
        (error) => {
          console.error(JSON.stringify({ level: "error", msg: "shutdown failed", error: String(error) }));
          process.exit(1);
        },
      );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

/**
 * Zero-config development mode: the environment left the secrets to be generated. The console
 * is then offered the generated admin key, but only while the gateway listens on loopback
 * (README "Web console"); test events are on either way.
 */
function developmentMode(config: GatewayConfig, dev: Awaited<ReturnType<typeof applyDevSecrets>>, host?: string) {
  if (!dev.secrets || dev.filled.length === 0) return undefined;
  const loopback = ["127.0.0.1", "::1", "localhost"].includes(host ?? config.server.host);
  return loopback && dev.filled.includes("GATEWAY_ADMIN_KEY_HASH")
    ? { devAdminKey: dev.secrets.GATEWAY_ADMIN_KEY }
    : {};
}

function printBanner(url: string, config: GatewayConfig, dev: Awaited<ReturnType<typeof applyDevSecrets>>) {
  console.log(
    JSON.stringify({
      time: new Date().toISOString(),
      level: "info",
      msg: "listening",
      url,
      store: config.store.driver,
      webhooks: config.sources.map((s) => `${url}/webhooks/${s.id}`),
    }),
  );
  if (dev.secrets && dev.filled.length > 0) {
    // Printed on purpose: generated for local development only, never used when the
    // environment provides the variables.
    const lines = [
      "DEVELOPMENT ONLY: secrets generated for local use (kept in the data dir, not for production)",
      ...(dev.filled.includes("ESIGN_WEBHOOK_SECRET")
        ? [`  ESIGN_WEBHOOK_SECRET=${dev.secrets.ESIGN_WEBHOOK_SECRET}`]
        : []),
      ...(dev.filled.includes("STAFFING_WEBHOOK_SECRET")
        ? [`  STAFFING_WEBHOOK_SECRET=${dev.secrets.STAFFING_WEBHOOK_SECRET}`]
        : []),
      ...(dev.filled.includes("GATEWAY_ADMIN_KEY_HASH") ? [`  admin API key: ${dev.secrets.GATEWAY_ADMIN_KEY}`] : []),
      `  try: npm run gateway -- trigger esign agreement.completed --url ${url} --times 2`,
      `  console: ${url}/console`,
    ];
    console.log(lines.join("\n"));
  }
}

async function triggerCommand(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      config: { type: "string" },
      times: { type: "string", default: "1" },
      id: { type: "string" },
    },
  });
  const [sourceId, type] = positionals;
  if (!sourceId || !type) throw new UsageError("trigger needs <sourceId> <eventType>");
  const { config } = await loadConfig(values.config);
  const source = config.sources.find((s) => s.id === sourceId);
  if (!source) throw new UsageError(`no source "${sourceId}" in the configuration`);
  const types = sampleEventTypes(source.service);
  if (!types.includes(type)) {
    throw new UsageError(
      `"${type}" is not a documented ${source.service} event type; one of:\n  ${types.join("\n  ")}`,
    );
  }
  const times = Number(values.times);
  if (!Number.isInteger(times) || times < 1 || times > 100) throw new UsageError("--times: an integer 1..100");
  const secret = source.secrets[0] as string;
  const delivery = await buildSampleDelivery(createNodeCrypto(), source.service, type, secret, { uniqueId: values.id });
  const base = values.url ?? `http://${config.server.host}:${config.server.port}`;
  const target = `${base.replace(/\/$/, "")}/webhooks/${encodeURIComponent(sourceId)}`;
  let failed = false;
  for (let i = 0; i < times; i++) {
    const response = await fetch(target, { method: "POST", headers: delivery.headers, body: delivery.body });
    const text = await response.text();
    console.log(`POST ${target} -> ${response.status} ${text}`);
    if (response.status >= 300) failed = true;
  }
  if (failed) process.exitCode = 1;
}

class UsageError extends Error {}

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve":
      return serveCommand(rest);
    case "trigger":
      return triggerCommand(rest);
    case "emulate":
      return emulateCommand(rest);
    case "listen":
      return listenCommand(rest);
    case "transform":
      return runMain(transformCommand, { rawArgs: rest });
    case "hash-key": {
      if (!rest[0]) throw new UsageError("hash-key needs <apiKey>");
      console.log(`sha256:${createHash("sha256").update(rest[0]).digest("hex")}`);
      return;
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : "no command given");
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else if (error instanceof UsageError || error instanceof ListenUsageError)
    console.error(`${error.message}\n\n${USAGE}`);
  else console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(error instanceof UsageError || error instanceof ListenUsageError ? 64 : 1);
});
