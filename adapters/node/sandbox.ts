/**
 * The zero-config sandbox of `npm start` (docs/sandbox-and-emulators.md): with the default
 * configuration, every
 * emulator of emulators/registry.ts whose real upstream URL is not in the environment starts on
 * the emulators' own port (the gateway's port + 1; any free port when the gateway's is 0), the
 * default upstreams point at them with their credentials, and once the gateway listens its
 * `/webhooks/{name}` become the emulators' webhook targets, signed with the gateway's own webhook
 * secrets. The default config then enriches the emulated services' events on the live stream.
 * They bind loopback whatever `--host` says, unless `GATEWAY_EMULATORS_HOST` names another address.
 * `GATEWAY_EMULATORS=off` switches them all off. `gateway emulate` runs them alone.
 */
import { emulatorRegistry } from "../../emulators/registry.ts";
import { loadDevSecrets } from "./dev-secrets.ts";
import { type RunningEmulators, startEmulators } from "./start-emulators.ts";

export interface Sandbox {
  emulators: RunningEmulators;
  /** Points the emulators' webhooks at the gateway listening on `gatewayUrl`. */
  wire(gatewayUrl: string): void;
  close(): Promise<void>;
}

/** Emulated-time multiplier from `GATEWAY_EMULATOR_TIME_SCALE` (default 1). */
export function timeScaleFromEnv(env: Record<string, string | undefined>): number {
  const value = Number(env.GATEWAY_EMULATOR_TIME_SCALE ?? "1");
  return Number.isFinite(value) && value > 0 && value <= 100 ? value : 1;
}

/**
 * Starts the sandbox when it applies, and sets the upstream variables the default config reads
 * in `env` (call before the default config is loaded). Returns undefined when it does not apply.
 */
export async function startSandbox(
  env: Record<string, string | undefined>,
  options: {
    dataDir: string;
    gatewayPort: number;
    host: string;
    /** Zero-config mode: the webhook secrets the environment leaves unset come from the development ones. */
    developmentSecrets: boolean;
  },
): Promise<Sandbox | undefined> {
  if (env.GATEWAY_EMULATORS === "off") return undefined;
  const wanted = [...emulatorRegistry].filter(([, entry]) => !env[entry.upstreamUrlEnv]);
  if (wanted.length === 0) return undefined;
  // Outside zero-config nothing is generated: the gateway's own secrets are the environment's.
  const dev = options.developmentSecrets
    ? ((await loadDevSecrets(options.dataDir)) as unknown as Record<string, string | undefined>)
    : {};
  const emulators = await startEmulators({
    // Loopback whatever `serve --host` says: the emulators hold sandbox credentials and answer
    // control calls, and nothing outside this machine needs them. GATEWAY_EMULATORS_HOST asks.
    host: env.GATEWAY_EMULATORS_HOST || "127.0.0.1",
    port: options.gatewayPort === 0 ? 0 : options.gatewayPort + 1,
    timeScale: timeScaleFromEnv(env),
    only: Object.fromEntries(
      wanted.map(([name, entry]) => [
        name,
        { webhookSecret: env[entry.webhookSecretEnv] ?? dev[entry.webhookSecretEnv] },
      ]),
    ),
  });
  for (const { emulator, apiUrl } of emulators.served) Object.assign(env, emulator.upstreamEnv(apiUrl));
  // The default config lets the development admin key call the proxy in the sandbox, and enriches
  // the live stream's events of the emulated services (route `sandbox-enriched`).
  env.GATEWAY_SANDBOX = "1";
  env.GATEWAY_SANDBOX_SERVICES = emulators.served.map(({ name }) => name).join(",");
  return {
    emulators,
    wire(gatewayUrl) {
      for (const { name, emulator } of emulators.served) {
        emulator.targetWebhooks(`${gatewayUrl}/webhooks/${encodeURIComponent(name)}`);
      }
    },
    close: () => emulators.close(),
  };
}

/** The log line announcing the emulators (no secrets). */
export function describeEmulators(emulators: RunningEmulators): string {
  return JSON.stringify({
    time: new Date().toISOString(),
    level: "info",
    msg: "emulators listening (SANDBOX: emulated upstreams, not the real services)",
    url: emulators.url,
    ...Object.fromEntries(emulators.served.map(({ name, apiUrl }) => [name, apiUrl])),
    control: emulators.served.map(({ controlUrl }) => controlUrl),
  });
}
