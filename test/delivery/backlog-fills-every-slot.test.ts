/**
 * The situation behind the ~1 s delivery detour (BENCHMARKS.md, delivery latency): a lane with a
 * backlog larger than its slots, whose attempts come back late and together (the destination, or
 * the gateway's own event loop after a slow disk sync, held them). Nothing was lost there and
 * nothing waited for the poll; the lane simply completed at most `concurrency` attempts per round
 * trip, and with the old default of 4 that was ~100-150 deliveries/s on a busy gateway while
 * webhooks arrived at 500-800/s.
 *
 * Here, in a real gateway process with its delivery polls an hour apart and a destination with
 * default settings, the destination holds every answer until 16 attempts are open at once, then
 * answers them all; later it does that a second time. So each round passes only if the lane,
 * fed by the router and by its own completions alone, keeps DEFAULT_CONCURRENCY (16) attempts in
 * flight from its backlog, and never more; every event of the burst then arrives. Not timed: the
 * deadlines only bound the test on a loaded machine.
 */
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_CONCURRENCY } from "../../src/delivery/delivery-policy.ts";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.ts";
import { postMany, readDestinations, startHookGatewayWithoutPoll } from "./helpers/process-fixtures.ts";
import { startWebhookReceiver, waitFor } from "./helpers/webhook-receiver.ts";

const EVENTS = 200;
/** The destination starts holding its answers again from this request on (second round). */
const SECOND_ROUND_FROM = 100;
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
});

/** A destination that holds answers until `DEFAULT_CONCURRENCY` are open, in two rounds. */
async function gatedReceiver() {
  let open = 0;
  let mostOpen = 0;
  let rounds = 0;
  let holding = true;
  let release: () => void = () => {};
  let gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const receiver = await startWebhookReceiver((request) => {
    if (request.n === SECOND_ROUND_FROM) {
      holding = true;
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
    }
    open++;
    mostOpen = Math.max(mostOpen, open);
    const answered = (holding ? gate : Promise.resolve()).then(() => {
      open--;
    });
    if (holding && open === DEFAULT_CONCURRENCY) {
      holding = false;
      rounds++;
      release();
    }
    return { status: 204, after: answered };
  });
  return { receiver, rounds: () => rounds, mostOpen: () => mostOpen, open: () => open };
}

async function backlogKeepsEverySlotBusy(store?: (dataDir: string) => Record<string, unknown>) {
  const gated = await gatedReceiver();
  cleanup.push(() => gated.receiver.close());
  // No `concurrency`: the lane's width is the default. The attempt timeout is raised only so that
  // a narrower lane could not reach 16 open requests by timing attempts out and starting others.
  const gateway = await startHookGatewayWithoutPoll({ url: gated.receiver.url, timeoutSeconds: 300 }, cleanup, store);

  const ids = await postMany(gateway, EVENTS, 32);
  const received = () => new Set(gated.receiver.ids());
  await waitFor(
    `two rounds of ${DEFAULT_CONCURRENCY} attempts in flight at once, and every event (the poll is an hour away)`,
    () => gated.rounds() === 2 && received().size >= EVENTS,
    240_000,
  ).catch((error: Error) => {
    throw new Error(
      `${error.message}: rounds ${gated.rounds()}, at most ${gated.mostOpen()} attempts open at once, ` +
        `${gated.open()} open now, ${EVENTS - received().size} of ${EVENTS} events missing`,
    );
  });
  expect([...received()].sort()).toEqual([...ids].sort());
  expect(gated.mostOpen()).toBe(DEFAULT_CONCURRENCY);
  await waitFor("the destination to drain", async () => (await readDestinations(gateway))[0]?.backlog === 0, 60_000);
  const [health] = await readDestinations(gateway);
  expect(health).toMatchObject({ id: "hook", state: "active", backlog: 0, counts: { delivered: EVENTS } });
}

describe("a lane with a backlog whose answers come back late and together (polls an hour apart)", () => {
  it("embedded store: every slot of the default width stays busy, every event arrives", {
    timeout: 360_000,
  }, async () => {
    await backlogKeepsEverySlotBusy();
  });

  it("Redis store: every slot of the default width stays busy, every event arrives", { timeout: 360_000 }, async () => {
    const redis: RedisServer = await startRedisServer();
    cleanup.push(() => redis.stop());
    await backlogKeepsEverySlotBusy(() => ({ driver: "redis", url: redis.url, prefix: `gw-slots-${Date.now()}` }));
  });
});
