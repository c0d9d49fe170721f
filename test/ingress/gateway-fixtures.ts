/**
 * Fixtures shared by the ingress, event log and operations tests: an in-process gateway on the
 * memory store with a clock the test moves by hand, and a real gateway process started with an
 * edited copy of the default test configuration.
 */

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryStore } from "../../adapters/store/memory.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import type { Gateway } from "../../src/create-gateway.ts";
import { builtinServices } from "../../src/services/registry.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { buildInProcessGateway } from "../helpers/in-process-gateway.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";

/** A fixed, realistic start time for injected clocks. */
export const T0 = Date.parse("2026-11-24T12:00:00.000Z");

export interface TestGateway {
  gateway: Gateway;
  store: ReturnType<typeof memoryStore>;
  secrets: ReturnType<typeof makeSecrets>;
  /** Current injected time, epoch ms. */
  now(): number;
  /** Moves the injected clock forward. */
  advance(ms: number): void;
  /** `gateway.fetch` of a path relative to the gateway's origin. */
  request(path: string, init?: RequestInit): Promise<Response>;
}

/** An in-process gateway on the memory store; `config` is merged over the test defaults. */
export function createTestGateway(config: Record<string, unknown> = {}, sourceExtras: Record<string, unknown> = {}) {
  const secrets = makeSecrets();
  let t = T0;
  const store = memoryStore({ now: () => t, services: builtinServices });
  const resolved = resolveConfig(
    {
      store: { driver: "memory" },
      sources: [
        { id: "esign", service: "esign", secrets: [secrets.esign], ...sourceExtras },
        { id: "staffing", service: "staffing", secrets: [secrets.staffing], ...sourceExtras },
      ],
      admin: { apiKeyHashes: [adminKeyHash(secrets.adminKey)] },
      log: { level: "silent" },
      ...config,
    },
    {},
  );
  const gateway = buildInProcessGateway({ config: resolved, resolved: true, store, clock: { now: () => t } });
  const fixture: TestGateway = {
    gateway,
    store,
    secrets,
    now: () => t,
    advance(ms) {
      t += ms;
    },
    request(path, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has("authorization")) headers.set("authorization", `Bearer ${secrets.adminKey}`);
      return gateway.fetch(new Request(`http://gateway.test${path}`, { ...init, headers }));
    },
  };
  return fixture;
}

/** The origin used for in-process requests. */
export const IN_PROCESS_ORIGIN = "http://gateway.test";

/**
 * Starts a real gateway process with the default test config, after `edit` changed it (e.g. a
 * small body limit or log level info). A fresh data dir and secrets unless `reuse` names them
 * (restart tests).
 */
export async function startEditedGatewayProcess(
  edit: (config: ReturnType<typeof defaultTestConfig> & Record<string, unknown>) => void,
  reuse: {
    dataDir?: string;
    secrets?: GatewayProcess["secrets"];
    env?: Record<string, string>;
    shellPrefix?: string;
  } = {},
): Promise<GatewayProcess> {
  const secrets = reuse.secrets ?? makeSecrets();
  const dataDir = reuse.dataDir ?? (await mkdtemp(join(tmpdir(), "gw-data-")));
  const config = defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey));
  edit(config);
  return startGatewayProcess({ config, dataDir, secrets, env: reuse.env, shellPrefix: reuse.shellPrefix });
}

/**
 * A gateway process with a third source `tiny` (e-sign, the smallest allowed body limit, 1 KiB)
 * for the 413 cases: a small limit keeps them small, since a client still writing a large body
 * when the server answers and closes may see a reset instead of the answer.
 */
export function startGatewayWithTinySource(): Promise<GatewayProcess> {
  return startEditedGatewayProcess((config) => {
    config.sources.push({
      id: "tiny",
      service: "esign",
      secrets: ["${TEST_ESIGN_SECRET}"],
      bodyLimitBytes: 1024,
    } as never);
  });
}
