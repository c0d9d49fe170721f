/**
 * Per-subject ordering across instances: events of one subject accepted by three different
 * instances reach an `ordering: "subject"` destination one at a time, oldest first, although
 * each first attempt fails and is retried, so that another instance could otherwise take a
 * later event of the subject meanwhile.
 */
import { describe, expect, test } from "vitest";
import { waitFor } from "../delivery/helpers/webhook-receiver.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import { ENGINES, useClusterSuite } from "./cluster-fixtures.ts";

const SUBJECTS = 4;
const PER_SUBJECT = 6;

describe.each(ENGINES)("on %s", (engineName) => {
  const seen = new Set<string>();
  const suite = useClusterSuite(engineName, {
    // The first attempt of every event fails: the event then waits 0.2 s for its retry.
    responder: (request) => {
      const id = request.headers["webhook-id"] as string;
      if (seen.has(id)) return { status: 200 };
      seen.add(id);
      return { status: 503 };
    },
    cluster: (receiver) => ({
      count: 3,
      hookUrl: receiver.url,
      // Long enough that a live instance on a saturated 2-core machine renews in time (every third
      // of it): with 2 s, an instance starved for longer lost its lease on a record it was
      // delivering, and another took the record over and attempted it again after its success.
      leaseSeconds: 10,
      edit: (config) => {
        const hook = config.destinations.find((d) => d.id === "hook") as Record<string, unknown>;
        hook.ordering = "subject";
        hook.breaker = { failures: 1000 };
      },
    }),
  });

  test("events of one subject accepted on three instances are attempted oldest first, one at a time", async () => {
    const { cluster, receiver } = suite;
    const { gateways, secrets } = cluster;
    const order = new Map<string, { subject: number; index: number }>();
    await Promise.all(
      Array.from({ length: SUBJECTS }, async (_, subject) => {
        for (let index = 0; index < PER_SUBJECT; index++) {
          const gateway = gateways[(subject + index) % gateways.length] as GatewayProcess;
          const delivery = await esignDelivery(secrets.esign, "agreement.signed", { subjectId: `agr-${subject}` });
          const answer = await postWebhook(gateway.url, "esign", delivery);
          expect(answer.status).toBe(202);
          order.set(((await answer.json()) as { id: string }).id, { subject, index });
        }
      }),
    );
    // Delivered: its second attempt (the first fails) reached the receiver. A count of all the
    // requests would also be reached by a repeated attempt before the last event's second one.
    const attemptsOf = (id: string) => receiver.requests.filter((r) => r.headers["webhook-id"] === id).length;
    await waitFor("every event delivered", () => [...order.keys()].every((id) => attemptsOf(id) >= 2), 60_000);
    for (let subject = 0; subject < SUBJECTS; subject++) {
      const attempts = receiver
        .ids()
        .map((id) => order.get(id))
        .filter((o) => o?.subject === subject)
        .map((o) => o?.index as number);
      // Each event: one failed and one successful attempt, and never one of an older event after it.
      expect(attempts).toEqual(Array.from({ length: PER_SUBJECT }, (_, i) => [i, i]).flat());
    }
  });
});
