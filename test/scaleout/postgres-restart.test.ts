/**
 * PostgreSQL restarted under a running gateway and a steady stream of webhooks, once stopped
 * cleanly (`pg_ctl stop -m fast`: every session gets FATAL 57P01) and once abruptly
 * (`-m immediate`: the postmaster quits without a checkpoint, as after a crash). While it is
 * down every webhook gets 503 with Retry-After in the error envelope (never a 2xx, never a
 * hang) and `/healthz` answers 503 naming the store; once it is back on the same address and
 * data the gateway reconnects without a restart: it accepts again, the live subscriber opened
 * before the outage gets the events accepted after it (the hub's LISTEN client reconnected),
 * every webhook acknowledged before, during or after the outage is in the log, and the outbox
 * delivers every one of them, including those whose attempts failed before the outage.
 */
import { describe, expect, test } from "vitest";
import { waitFor } from "../delivery/helpers/webhook-receiver.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, listAllEventIds, webhookRequest } from "../helpers/signed-requests.ts";
import { openReadyWs } from "../stream/stream-fixtures.ts";
import { useGatewayOnPostgres, wsUrlOf } from "./cluster-fixtures.ts";

/** An answer slower than this counts as a hang (the pool's connect timeout is 5 s). */
const HANG_MS = 30_000;

describe.each(["fast", "immediate"] as const)("PostgreSQL stopped with -m %s", (mode) => {
  /** Ids the hook destination answered 200 for. */
  const delivered = new Set<string>();
  const suite = useGatewayOnPostgres({ responder: () => ({ status: 500 }) });

  test("503 + Retry-After while down under load, reconnect without restart, nothing acknowledged lost", async () => {
    const { server, receiver, cluster } = suite;
    const gateway = cluster.gateways[0] as GatewayProcess;
    const { secrets, streamKey } = cluster;
    const subscriber = await openReadyWs(wsUrlOf(gateway, streamKey));

    // Steady load through the whole outage: every answer is recorded with the phase it was sent in.
    let phase = "up" as "up" | "down" | "restarting";
    const acknowledged: string[] = [];
    const duringOutage: { status: number; retryAfter: string | null; code?: string }[] = [];
    const failures: string[] = [];
    let loading = true;
    const load = (async () => {
      while (loading) {
        const sentIn = phase;
        const delivery = await esignDelivery(secrets.esign);
        let status = 0;
        let retryAfter: string | null = null;
        let code: string | undefined;
        try {
          const answer = await fetch(webhookRequest(gateway.url, "esign", delivery), {
            signal: AbortSignal.timeout(HANG_MS),
          });
          status = answer.status;
          retryAfter = answer.headers.get("retry-after");
          const body = (await answer.json()) as { id?: string; error?: { code: string } };
          if (status === 202) acknowledged.push(body.id as string);
          code = body.error?.code;
        } catch (error) {
          // A connection the gateway closed is no answer (and no 2xx): the upstream re-sends.
          // A timeout is a hang, which the gateway must never do.
          if ((error as Error).name === "TimeoutError") failures.push(`no answer within ${HANG_MS} ms`);
        }
        if (sentIn === "down" && phase === "down") duringOutage.push({ status, retryAfter, code });
      }
    })();

    await waitFor("load before the outage", () => acknowledged.length >= 5);
    await server.pause(mode);
    phase = "down";
    await waitFor("answers during the outage", () => duringOutage.filter((a) => a.status === 503).length >= 10, 60_000);
    const down = await fetch(`${gateway.url}/healthz`, { signal: AbortSignal.timeout(HANG_MS) });
    expect(down.status).toBe(503);
    expect(((await down.json()) as { store: { driver: string; reachable: boolean } }).store).toMatchObject({
      driver: "postgres",
      reachable: false,
    });
    receiver.respond((request) => {
      delivered.add(request.headers["webhook-id"] as string);
      return { status: 200 };
    });
    phase = "restarting";
    await server.start();
    phase = "up";
    await waitFor(
      "healthz 200 after the reconnect",
      async () => (await fetch(`${gateway.url}/healthz`)).status === 200,
    );
    const before = acknowledged.length;
    await waitFor("acceptance again", () => acknowledged.length >= before + 5, 30_000);
    loading = false;
    await load;

    // Never a 2xx and never a hang while down; every answer given is the 503 envelope with Retry-After.
    expect(failures).toEqual([]);
    const answered = duringOutage.filter((a) => a.status !== 0);
    expect(answered.length).toBeGreaterThanOrEqual(10);
    for (const answer of answered) {
      expect(answer).toMatchObject({ status: 503, code: "store_unavailable" });
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    }
    expect(gateway.child.exitCode).toBeNull();

    // Every acknowledged event is in the log, reaches the live subscriber opened before the
    // outage (in acceptance order), and is delivered to the hook.
    const logged = new Set(await listAllEventIds(gateway.url, secrets.adminKey));
    expect(acknowledged.filter((id) => !logged.has(id))).toEqual([]);
    await subscriber.log.waitForEvents(acknowledged.length, 60_000);
    expect(subscriber.log.eventIds()).toEqual(acknowledged);
    subscriber.ws.close();
    await waitFor("every acknowledged event delivered", () => acknowledged.every((id) => delivered.has(id)), 90_000);
  }, 240_000);
});
