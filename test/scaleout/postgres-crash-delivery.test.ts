/**
 * PostgreSQL crashed (`pg_ctl stop -m immediate`: the postmaster quits at once, WAL still in its
 * buffers is lost) under a gateway delivering a steady load to a healthy destination, then
 * started again on the same data. The routing transactions commit asynchronously, so the crash
 * may take the last of them (records and cursor together; `wal_writer_delay` at its maximum
 * keeps them in the buffers until a synchronous commit writes them): every acknowledged (2xx)
 * event still reaches the destination, some perhaps twice with the same webhook-id (at least
 * once). The repeats and the times the router found the stored cursor behind are printed.
 */
import { describe, expect, test } from "vitest";
import { waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { type GatewayProcess, logLinesWith } from "../helpers/gateway-process.ts";
import { esignDelivery, listAllEventIds, webhookRequest } from "../helpers/signed-requests.ts";
import { useGatewayOnPostgres } from "./cluster-fixtures.ts";

const HANG_MS = 30_000;
/** Senders in parallel (each one request at a time). */
const SENDERS = 4;

describe("PostgreSQL crash under a delivering gateway", () => {
  /** Deliveries the destination answered 200, per webhook-id. */
  const received = new Map<string, number>();
  const suite = useGatewayOnPostgres({
    settings: { wal_writer_delay: "10000" },
    responder: (request) => {
      const id = request.headers["webhook-id"] as string;
      received.set(id, (received.get(id) ?? 0) + 1);
      return { status: 200 };
    },
  });

  test("every acknowledged event is delivered after the crash; repeats only, counted", async () => {
    const { server, cluster } = suite;
    const gateway = cluster.gateways[0] as GatewayProcess;
    const { secrets } = cluster;
    const acknowledged: string[] = [];
    const hangs: string[] = [];
    const unexpected: number[] = [];
    let loading = true;
    const sender = async () => {
      while (loading) {
        const delivery = await esignDelivery(secrets.esign);
        try {
          const answer = await fetch(webhookRequest(gateway.url, "esign", delivery), {
            signal: AbortSignal.timeout(HANG_MS),
          });
          const body = (await answer.json()) as { id?: string };
          if (answer.status === 202) acknowledged.push(body.id as string);
          // While the server is down: 503 (Retry-After, tested in postgres-restart.test.ts).
          else if (answer.status !== 503) unexpected.push(answer.status);
        } catch (error) {
          if ((error as Error).name === "TimeoutError") hangs.push(`no answer within ${HANG_MS} ms`);
        }
      }
    };
    const load = Promise.all(Array.from({ length: SENDERS }, sender));

    // Deliveries flowing (routed, attempted, saved) when the server crashes.
    await waitFor("deliveries under load before the crash", () => received.size >= 50, 60_000);
    await server.pause("immediate");
    const atCrash = acknowledged.length;
    await server.start();
    await waitFor("acceptance again after the restart", () => acknowledged.length >= atCrash + 20, 60_000);
    loading = false;
    await load;

    expect(hangs).toEqual([]);
    expect(unexpected).toEqual([]);
    expect(gateway.child.exitCode).toBeNull();
    const logged = new Set(await listAllEventIds(gateway.url, secrets.adminKey));
    expect(acknowledged.filter((id) => !logged.has(id))).toEqual([]);
    await waitFor("every acknowledged event delivered", () => acknowledged.every((id) => received.has(id)), 90_000);

    const repeats = [...received.values()].reduce((sum, n) => sum + n - 1, 0);
    const rewinds = logLinesWith(
      gateway.lines,
      "the stored routing cursor is behind this instance's: routing again from it",
    );
    console.log(
      `PostgreSQL crash under load: ${acknowledged.length} acknowledged (${atCrash} before the crash), ${received.size} delivered, ${repeats} repeats, router rewound ${rewinds.length} time(s)${rewinds.map((line) => ` (stored ${String(line.stored)}, was ${String(line.cursor)})`).join("")}`,
    );
    // At least once: a repeat is the same event again, never more than the events routed around the crash.
    expect(repeats).toBeLessThan(acknowledged.length);
  }, 240_000);
});
