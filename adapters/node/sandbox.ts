/**
 * The zero-config sandbox of `npm start` (README, Sandbox): with the default configuration and no
 * upstream URL in the environment, the e-sign and staffing emulators start on their own port
 * (the gateway's port + 1; any free port when the gateway's is 0), the default upstreams point
 * at them with their credentials, and once the gateway listens its `/webhooks/esign` and
 * `/webhooks/staffing` become the emulators' webhook targets, signed with the gateway's own
 * webhook secrets. `ESIGN_API_URL` / `STAFFING_API_URL` switch that emulator off;
 * `GATEWAY_EMULATORS=off` switches both off. `gateway emulate` runs them alone.
 */
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
  options: { dataDir: string; gatewayPort: number; host: string },
): Promise<Sandbox | undefined> {
  if (env.GATEWAY_EMULATORS === "off") return undefined;
  const emulateEsign = !env.ESIGN_API_URL;
  const emulateStaffing = !env.STAFFING_API_URL;
  if (!emulateEsign && !emulateStaffing) return undefined;
  const dev = await loadDevSecrets(options.dataDir);
  const esignSecret = env.ESIGN_WEBHOOK_SECRET ?? dev.ESIGN_WEBHOOK_SECRET;
  const staffingSecret = env.STAFFING_WEBHOOK_SECRET ?? dev.STAFFING_WEBHOOK_SECRET;
  const emulators = await startEmulators({
    host: options.host,
    port: options.gatewayPort === 0 ? 0 : options.gatewayPort + 1,
    timeScale: timeScaleFromEnv(env),
    esign: emulateEsign ? { signingSecret: esignSecret } : false,
    staffing: emulateStaffing ? { webhookSecret: staffingSecret } : false,
  });
  if (emulators.esign && emulators.esignBaseUrl) {
    env.ESIGN_API_URL = emulators.esignBaseUrl;
    env.ESIGN_CLIENT_ID = emulators.esign.client.clientId;
    env.ESIGN_CLIENT_SECRET = emulators.esign.client.clientSecret;
  }
  if (emulators.staffing && emulators.staffingBaseUrl) {
    env.STAFFING_API_URL = emulators.staffingBaseUrl;
    env.STAFFING_API_KEY = emulators.staffing.apiKey;
  }
  // The default config lets the development admin key call the proxy in the sandbox.
  env.GATEWAY_SANDBOX = "1";
  return {
    emulators,
    wire(gatewayUrl) {
      emulators.esign?.registerWebhook(`${gatewayUrl}/webhooks/esign`, esignSecret);
      emulators.staffing?.setDefaultWebhookUrl(`${gatewayUrl}/webhooks/staffing`);
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
    esign: emulators.esignBaseUrl ?? null,
    staffing: emulators.staffingBaseUrl ?? null,
    control: [
      emulators.esign ? `${emulators.url}/esign/_emulator` : null,
      emulators.staffing ? `${emulators.url}/staffing/_emulator` : null,
    ].filter(Boolean),
  });
}
