/**
 * Issue 12 row 8 against a real gateway process on its default SQLite store: the disk fills
 * while deliveries run. Five deliveries are in flight (`delivering` durably in `gateway.db`) when
 * the process may no longer write any file (a file size limit of 1 byte set on the running
 * process with `prlimit`: every write past offset 1 fails with EFBIG; a limit at the current
 * file sizes only holds while the write-ahead log grows, since after a checkpoint SQLite rewinds
 * it and overwrites it in place);
 * then the receiver answers 200. The outbox refuses the `delivered` writes, which are retried
 * (src/delivery/outbox-write-retry.ts): meanwhile the admin views show each delivery as it
 * really is (`delivered`, never back to `delivering`) and `/healthz` says the gateway cannot
 * record. Once the limit is lifted the writes land without a restart, and a gateway killed with
 * SIGKILL and started again sends none of them a second time.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterEach, expect, test } from "vitest";
import { makeWhsecSecret } from "../delivery/helpers/in-process-gateway.ts";
import { fanoutConfig, makeDataDir, postMany, readDestinations } from "../delivery/helpers/process-fixtures.ts";
import { startWebhookReceiver, type WebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";

const run = promisify(execFile);
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** The order a delivery's states may be shown in; going back is showing a state it is not in. */
const ORDER = ["pending", "delivering", "delivered"];

/**
 * The state of each delivery of `destination` as the files on disk hold it: `gateway.db` and its
 * write-ahead log copied aside and opened there (the gateway holds the database's exclusive lock),
 * which is what a gateway started on those files would find. Undefined while the copy is torn
 * (a checkpoint ran during the copy); callers poll.
 */
async function durableStates(dataDir: string, destination: string): Promise<Map<string, string> | undefined> {
  const copy = await mkdtemp(join(tmpdir(), "gw-durable-"));
  try {
    await copyFile(join(dataDir, "gateway.db"), join(copy, "gateway.db"));
    await copyFile(join(dataDir, "gateway.db-wal"), join(copy, "gateway.db-wal")).catch((error) => {
      if (error.code !== "ENOENT") throw error;
    });
    const db = new Database(join(copy, "gateway.db"));
    try {
      const rows = db.prepare("SELECT event_id, state FROM deliveries WHERE destination_id = ?").all(destination) as {
        event_id: string;
        state: string;
      }[];
      return new Map(rows.map((row) => [row.event_id, row.state]));
    } finally {
      db.close();
    }
  } catch {
    return undefined;
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

/** Polls the on-disk states until every one of `ids` is `state`. */
async function waitForDurable(dataDir: string, ids: string[], state: string) {
  await waitFor(`five deliveries durably \`${state}\``, async () => {
    const states = await durableStates(dataDir, "hook");
    return ids.every((id) => states?.get(id) === state);
  });
}

async function getJson(gateway: GatewayProcess, path: string) {
  const response = await fetch(`${gateway.url}${path}`, {
    headers: { authorization: `Bearer ${gateway.secrets.adminKey}` },
  });
  return { status: response.status, body: await response.json() };
}

/** Reads the admin list of deliveries over and over, keeping each delivery's states in order seen. */
function watchAdminView(gateway: GatewayProcess) {
  const seen = new Map<string, string[]>();
  const failures: string[] = [];
  let watching = true;
  let reads = 0;
  const loop = (async () => {
    while (watching) {
      const { status, body } = await getJson(gateway, "/destinations/hook/deliveries?limit=100").catch((error) => ({
        status: 0,
        body: { deliveries: [], error: String(error) },
      }));
      if (status !== 200) {
        failures.push(`${status} ${JSON.stringify(body)}`);
        break;
      }
      for (const delivery of body.deliveries as { event_id: string; state: string }[]) {
        const states = seen.get(delivery.event_id) ?? [];
        if (states.at(-1) !== delivery.state) states.push(delivery.state);
        seen.set(delivery.event_id, states);
      }
      reads++;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    seen,
    failures,
    reads: () => reads,
    async stop() {
      watching = false;
      await loop;
    },
  };
}

function receiverHolding(): Promise<{ receiver: WebhookReceiver; release: () => void }> {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  return startWebhookReceiver(() => ({ status: 200, after: held })).then((receiver) => ({ receiver, release }));
}

test("row 8: disk full while deliveries run: writes retried, the admin view true, each sent once", async () => {
  const { receiver, release } = await receiverHolding();
  cleanup.push(() => receiver.close());
  const dataDir = await makeDataDir();
  const adminKey = `admin_${randomUUID()}`;
  const options = {
    dataDir,
    secrets: { esign: `esign-${randomUUID()}`, staffing: `staffing-${randomUUID()}`, adminKey },
    env: { TEST_WHSEC: makeWhsecSecret() },
    // All five attempts in flight at once, held by the receiver as long as the test needs.
    config: fanoutConfig(dataDir, adminKey, [{ id: "hook", url: receiver.url, concurrency: 8, timeoutSeconds: 300 }]),
  };
  const gateway = await startGatewayProcess(options);
  cleanup.push(() => gateway.kill("SIGKILL"));

  const ids = await postMany(gateway, 5, 5);
  await waitFor("five attempts at the receiver", () => receiver.requests.length === 5);
  await waitForDurable(dataDir, ids, "delivering");
  const watcher = watchAdminView(gateway);
  cleanup.push(() => watcher.stop());

  // Disk full: every write of the process past the first byte of a file fails (EFBIG).
  await run("prlimit", [`--pid=${gateway.child.pid}`, "--fsize=1:"]);
  release();

  // The answers are in but cannot be recorded: the admin views still tell the truth.
  const listed = async () =>
    (await getJson(gateway, "/destinations/hook/deliveries?limit=100")).body.deliveries as {
      event_id: string;
      state: string;
    }[];
  await waitFor("the admin view to show all five delivered", async () =>
    (await listed()).every((d) => d.state === "delivered"),
  );
  expect((await listed()).map((d) => d.event_id).sort()).toEqual([...ids].sort());
  for (const id of ids) {
    const { body } = await getJson(gateway, `/events/${id}`);
    expect(body.deliveries.map((d: { state: string }) => d.state)).toEqual(["delivered"]);
  }
  const [hook] = await readDestinations(gateway);
  expect(hook?.counts).toEqual({ delivered: 5 });
  // ...and the disk really refused them: the files still hold `delivering`, /healthz says so.
  const durableWhileFull = await durableStates(dataDir, "hook");
  expect(ids.map((id) => durableWhileFull?.get(id))).toEqual(Array(5).fill("delivering"));
  const health = await getJson(gateway, "/healthz");
  expect(health.status).toBe(503);
  expect(health.body.store.writable).toBe(false);
  expect(health.body.store.failing.map((f: { what: string }) => f.what)).toContain("outbox");

  // Space returns: the retried writes land without a restart and /healthz recovers.
  await run("prlimit", [`--pid=${gateway.child.pid}`, "--fsize=unlimited:"]);
  await waitFor(
    "the outbox writes to be retried",
    async () => (await getJson(gateway, "/healthz")).status === 200,
    60_000,
  );
  await waitForDurable(dataDir, ids, "delivered");

  await watcher.stop();
  expect(watcher.failures).toEqual([]);
  expect(watcher.reads()).toBeGreaterThan(1);
  for (const id of ids) {
    const states = watcher.seen.get(id) ?? [];
    expect(states.at(-1)).toBe("delivered");
    const ranks = states.map((s) => ORDER.indexOf(s));
    expect(ranks.every((rank, i) => rank >= 0 && (i === 0 || rank > (ranks[i - 1] ?? -1)))).toBe(true);
  }

  // A crash afterwards (no graceful flush) and a restart: nothing is sent again.
  await gateway.kill("SIGKILL");
  const restarted = await startGatewayProcess(options);
  cleanup.push(() => restarted.kill());
  const after = (await postMany(restarted, 1, 1)).at(0) ?? "";
  expect(after).toMatch(/^evt_/);
  await waitFor("the event posted after the restart to arrive", () => receiver.ids().includes(after));
  await waitFor("the destination to drain", async () => (await readDestinations(restarted))[0]?.backlog === 0);
  expect((await readDestinations(restarted))[0]?.counts).toEqual({ delivered: 6 });
  const sent = receiver.ids();
  for (const id of [...ids, after]) expect(sent.filter((x) => x === id)).toHaveLength(1);
  expect(sent).toHaveLength(6);
});
