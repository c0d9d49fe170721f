/**
 * `gateway serve [--config file] [--host h] [--port p]`: runs the gateway on Node. Without
 * `--config` it is the zero-config gateway (docs/sandbox-and-emulators.md): default config and the
 * upstream
 * emulators on the port after the gateway's; development secrets only when the environment sets
 * none of the secret variables (zero-config.ts). Anywhere else a missing secret stops start-up
 * (configuration.md, "fail closed"). Stops gracefully on SIGINT/SIGTERM; SIGHUP reloads the config
 * file (reload-on-signal.ts).
 */
import { defineCommand } from "citty";
import { checkConfig } from "../../src/config/check-config.ts";
import { ConfigError } from "../../src/config/resolve-config.ts";
import type { GatewayConfig } from "../../src/config/schema.ts";
import { sampleEventTypes } from "../../src/samples/sample-webhooks.ts";
import { preparePrivateDir } from "../store/sqlite/private-dir.ts";
import { UsageError } from "./cli-errors.ts";
import { applyDevSecrets } from "./dev-secrets.ts";
import { exitAfterOutput } from "./exit-after-output.ts";
import { explainStoreError, storeFailure } from "./explain-store-error.ts";
import { dataDirOf, loadConfigFile } from "./load-config.ts";
import { assertPortFree, explainListenError } from "./port-in-use.ts";
import { reloadOnSignal } from "./reload-on-signal.ts";
import type { Sandbox } from "./sandbox.ts";
import type { RunningGateway } from "./start-gateway.ts";
import { assertNoWorkersConfig, isZeroConfig, ZERO_CONFIG_DATA_DIR } from "./zero-config.ts";

type DevSecretsUse = Awaited<ReturnType<typeof applyDevSecrets>>;

/**
 * Loads, env-interpolates and validates the configuration. Only in zero-config mode do
 * development secrets fill the secret variables; anywhere else a missing one is a ConfigError.
 */
async function loadConfig(path: string | undefined, zeroConfig: boolean, reading?: { fresh: boolean }) {
  const raw = await loadConfigFile(path, reading);
  const env = { ...process.env };
  const dataDir = zeroConfig ? dataDirOf(raw) : undefined;
  const dev: DevSecretsUse = dataDir ? await applyDevSecrets(env, dataDir, raw) : { filled: [], secrets: undefined };
  const { config, problems } = checkConfig(raw, env);
  if (!config) throw new ConfigError(problems);
  return { config, dev };
}

/**
 * Zero-config development mode: the environment left the secrets to be generated. The console
 * is then offered the generated admin key, but only while the gateway listens on loopback
 * (docs/console.md); test events are on either way.
 */
function developmentMode(config: GatewayConfig, dev: DevSecretsUse, host?: string) {
  if (!dev.secrets || dev.filled.length === 0) return undefined;
  const loopback = ["127.0.0.1", "::1", "localhost"].includes(host ?? config.server.host);
  return loopback && dev.filled.includes("GATEWAY_ADMIN_KEY_HASH")
    ? { devAdminKey: dev.secrets.GATEWAY_ADMIN_KEY }
    : {};
}

/** The sample the banner suggests: the service's `*.completed` event, else its first one. */
function sampleTypeOf(service: GatewayConfig["sources"][number]["service"]): string {
  const types = sampleEventTypes(service);
  return types.find((type) => type.endsWith(".completed")) ?? types[0] ?? "";
}

function printBanner(url: string, config: GatewayConfig, dev: DevSecretsUse) {
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
  if (!dev.secrets || dev.filled.length === 0) return;
  const secrets = dev.secrets as unknown as Record<string, string>;
  const first = config.sources[0];
  // Printed on purpose: generated for local development only, never used when the
  // environment provides the variables.
  const lines = [
    "DEVELOPMENT ONLY: secrets generated for local use (kept in the data dir, not for production)",
    ...dev.filled.filter((name) => name !== "GATEWAY_ADMIN_KEY_HASH").map((name) => `  ${name}=${secrets[name]}`),
    ...(dev.filled.includes("GATEWAY_ADMIN_KEY_HASH") ? [`  admin API key: ${secrets.GATEWAY_ADMIN_KEY}`] : []),
    ...(first
      ? [`  try: npm run gateway -- trigger ${first.id} ${sampleTypeOf(first.service)} --url ${url} --times 2`]
      : []),
    `  console: ${url}/console`,
  ];
  console.log(lines.join("\n"));
}

/** Stops gateway then sandbox on the first signal; a second one exits at once. */
function stopOnSignals(running: RunningGateway, sandbox: Sandbox | undefined) {
  let signals = 0;
  const shutdown = (signal: string) => {
    if (++signals > 1) process.exit(130);
    console.log(JSON.stringify({ time: new Date().toISOString(), level: "info", msg: "shutting down", signal }));
    running
      .stop()
      .then(() => sandbox?.close())
      .then(
        () => exitAfterOutput(0),
        (error) => {
          console.error(JSON.stringify({ level: "error", msg: "shutdown failed", error: String(error) }));
          return exitAfterOutput(1);
        },
      );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

export const serveCommand = defineCommand({
  meta: { name: "serve", description: "Run the gateway (no --config: the zero-config gateway with emulators)" },
  args: {
    config: {
      type: "string",
      valueHint: "file.ts|file.json",
      description: "Configuration file (default: zero-config)",
    },
    host: { type: "string", valueHint: "host", description: "Listen address (default: server.host, 127.0.0.1)" },
    port: {
      type: "string",
      valueHint: "port",
      description: "Listen port, 0 for any (default: server.port, 8787); zero-config emulators take port+1",
    },
  },
  async run({ args }) {
    const port = args.port === undefined ? undefined : Number(args.port);
    if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
      throw new UsageError(`--port: expected an integer 0..65535, received ${args.port}`);
    }
    // Everything this process creates (store, WAL, development secrets) is for its user only.
    process.umask(0o077);
    if (args.config === undefined) assertNoWorkersConfig(process.env);
    const zeroConfig = args.config === undefined && isZeroConfig(process.env);
    let sandbox: Sandbox | undefined;
    if (args.config === undefined) {
      // Zero configuration: emulated upstreams (docs/sandbox-and-emulators.md), set up before the
      // default config
      // loads. The gateway's own port is checked first: a second `npm start` is about that one.
      const host = args.host ?? "127.0.0.1";
      const gatewayPort = port ?? 8787;
      await assertPortFree("gateway", host, gatewayPort);
      // The development secrets live in the store's directory: 0700, before anything is written.
      if (zeroConfig) {
        await preparePrivateDir(ZERO_CONFIG_DATA_DIR).catch((error: unknown) =>
          explainStoreError(error, { driver: "sqlite", dir: ZERO_CONFIG_DATA_DIR }),
        );
      }
      // The emulators load only here: a configured gateway never holds their code.
      const { startSandbox } = await import("./sandbox.ts");
      sandbox = await startSandbox(process.env, {
        dataDir: ZERO_CONFIG_DATA_DIR,
        gatewayPort,
        host,
        developmentSecrets: zeroConfig,
      }).catch((error: unknown) => explainListenError(error, "sandbox-emulators", host, gatewayPort + 1));
    }
    try {
      const { config, dev } = await loadConfig(args.config, zeroConfig);
      const host = args.host ?? config.server.host;
      // The gateway's modules (h3, the store and transport drivers) load here, not for `--help`.
      const { startNodeGateway } = await import("./start-gateway.ts");
      const running = await startNodeGateway({
        config,
        host: args.host,
        port,
        development: zeroConfig ? developmentMode(config, dev, args.host) : undefined,
      }).catch((error: unknown) => {
        const failure = storeFailure(error, config.store);
        if (failure) throw failure;
        return explainListenError(error, "gateway", host, port ?? config.server.port);
      });
      // SIGHUP: the same file, read and checked as at start, applied without a restart. Set up
      // before the "listening" line, which tells a supervisor the process takes signals.
      reloadOnSignal(running, running.gateway.ctx.logger, args.config, async (file) => {
        return (await loadConfig(file, false, { fresh: true })).config;
      });
      printBanner(running.url, config, dev);
      if (sandbox) {
        sandbox.wire(running.url);
        const { describeEmulators } = await import("./sandbox.ts");
        console.log(describeEmulators(sandbox.emulators));
      }
      stopOnSignals(running, sandbox);
    } catch (error) {
      await sandbox?.close();
      throw error;
    }
  },
});
