/**
 * Fixtures for delivery tests against a real gateway process: a config whose `http`
 * destinations point at loopback receivers (loopback allowed explicitly), many signed webhooks
 * posted with bounded concurrency, and admin reads of destination health.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultTestConfig, type GatewayProcess, startGatewayProcess } from "../../helpers/gateway-process.ts";
import { adminKeyHash, esignDelivery, postWebhook, staffingDelivery } from "../../helpers/signed-requests.ts";
import { makeWhsecSecret } from "./in-process-gateway.ts";

export interface ProcessDestination {
  id: string;
  url: string;
  [field: string]: unknown;
}

/** The default test config plus `destinations`, one route to all of them; secrets from env. */
export function fanoutConfig(dataDir: string, adminKey: string, destinations: ProcessDestination[]) {
  return {
    ...defaultTestConfig(dataDir, adminKeyHash(adminKey)),
    destinations: destinations.map((d) => ({
      type: "http",
      secrets: ["${TEST_WHSEC}"],
      allowCidrs: ["127.0.0.1/32"],
      ...d,
    })),
    routes: [{ destinations: destinations.map((d) => d.id) }],
  };
}

/** A fresh data dir. */
export function makeDataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "gw-delivery-"));
}

/** Posts `count` signed webhooks (alternating services), `concurrency` at a time; the event ids. */
export async function postMany(gateway: GatewayProcess, count: number, concurrency = 32): Promise<string[]> {
  const ids: string[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const delivery =
        i % 2 === 0
          ? await esignDelivery(gateway.secrets.esign, "agreement.completed", { subjectId: `agr-${i % 7}` })
          : await staffingDelivery(gateway.secrets.staffing, "candidate.accepted");
      const response = await postWebhook(gateway.url, i % 2 === 0 ? "esign" : "staffing", delivery);
      const body = (await response.json()) as { id: string };
      if (response.status !== 202) throw new Error(`webhook ${i} answered ${response.status}`);
      ids[i] = body.id;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ids;
}

export interface DestinationJson {
  id: string;
  state: string;
  backlog: number;
  counts: Record<string, number>;
  breaker: { state: string };
  last_error: { error: string } | null;
}

/** `GET /destinations` of a running process. */
export async function readDestinations(gateway: GatewayProcess): Promise<DestinationJson[]> {
  const response = await fetch(`${gateway.url}/destinations`, {
    headers: { authorization: `Bearer ${gateway.secrets.adminKey}` },
  });
  if (response.status !== 200) throw new Error(`GET /destinations answered ${response.status}`);
  return ((await response.json()) as { destinations: DestinationJson[] }).destinations;
}

/**
 * A gateway process with one `http` destination, `hook`, whose delivery poll is an hour away (only
 * the hub's wake-ups route and claim): the store in a fresh data dir, SQLite unless `store` names
 * another. Its kill goes to `cleanup`.
 */
export async function startHookGatewayWithoutPoll(
  hook: { url: string; [field: string]: unknown },
  cleanup: (() => Promise<unknown>)[],
  store?: (dataDir: string) => Record<string, unknown>,
): Promise<GatewayProcess> {
  const dataDir = await makeDataDir();
  const adminKey = `admin_${Date.now()}`;
  const config = fanoutConfig(dataDir, adminKey, [{ id: "hook", ...hook }]);
  const gateway = await startGatewayProcess({
    dataDir,
    secrets: { esign: "esign-secret-0123456789", staffing: "staffing-secret-0123456789", adminKey },
    env: { TEST_WHSEC: makeWhsecSecret(), GATEWAY_DELIVERY_POLL_MS: "3600000" },
    config: store ? { ...config, store: store(dataDir) } : config,
  });
  cleanup.push(() => gateway.kill());
  return gateway;
}
