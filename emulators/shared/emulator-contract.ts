/**
 * What serving code needs from any upstream emulator (docs/sandbox-and-emulators.md): the h3 app,
 * where its API
 * lives, how to point the gateway's default upstream at it and its webhooks at the gateway.
 * adapters/node (the sandbox, `gateway emulate`) reaches an emulator only through this interface,
 * looked up by service name in emulators/registry.ts, so it names no service.
 */
import type { H3 } from "h3";

/** How the serving code sets an emulator up. */
export interface EmulatorSetup {
  /** Prefix of every route (several emulators on one port). Default "". */
  mountPath?: string;
  /** Multiplier of simulated delays. Default 1. */
  timeScale?: number;
  /** Run simulated activity on timers (a served emulator). Default false. */
  autoRun?: boolean;
  /** The secret its webhooks are signed with. Default: random. */
  webhookSecret?: string;
}

/** One emulator, set up. */
export interface ServiceEmulator {
  readonly app: H3;
  /** Route prefix of the API relative to the server origin (mount path included). */
  readonly apiPath: string;
  /** Route prefix of the control calls (`POST advance`, faults, ...). */
  readonly controlPath: string;
  /** The secret its webhooks are signed with. */
  readonly webhookSecret: string;
  /**
   * The variables config/default.ts reads for this upstream (URL and credentials) that point the
   * gateway at this emulator, whose API is served at `apiUrl`. Printed by `gateway emulate`:
   * sandbox credentials only, worthless elsewhere.
   */
  upstreamEnv(apiUrl: string): Record<string, string>;
  /**
   * The sandbox secrets that authorize control calls (`Authorization: Bearer <one of them>`)
   * when the emulator is served over the network: its API credential (e-sign client secret,
   * staffing API key) or its webhook signing secret (in `.data/dev-secrets.json` in the sandbox).
   */
  controlCredentials(): string[];
  /** Delivers every later webhook to `url` (the sandbox's gateway source). */
  targetWebhooks(url: string): void;
  /** Stops timers; pending simulated activity is dropped. */
  close(): void;
}

/** A registered emulator: how to make one, and the variables that concern it. */
export interface EmulatorEntry {
  /** The variable of config/default.ts with the real upstream's URL; when set, the sandbox leaves this emulator off. */
  readonly upstreamUrlEnv: string;
  /** The variable with the gateway source's webhook secret (config/default.ts, dev secrets). */
  readonly webhookSecretEnv: string;
  create(setup: EmulatorSetup): ServiceEmulator;
}
