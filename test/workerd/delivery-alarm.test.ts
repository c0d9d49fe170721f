/**
 * Retry timing survives the delivery object's eviction: after a failed attempt the object's
 * alarm holds the retry time; every object is then reset (memory and timers gone, storage kept,
 * as when the runtime evicts or restarts it), and the alarm alone brings the retry: the object
 * starts again, resumes from its outbox and delivers.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { esignBody, failHooks, postEsign, received, waitFor } from "./gateway-client.ts";

it("retries from the alarm after the delivery object was reset", async () => {
  const { body, eventId } = esignBody("evt-alarm", "agreement.expired");
  await failHooks(eventId, 1, 503, "/slow");
  const started = Date.now();
  expect((await postEsign(body)).status).toBe(202);
  await waitFor(async () =>
    (await received("/slow-failed")).some((r) => r.body.includes(eventId)) ? true : undefined,
  );
  const stub = env.GATEWAY_DELIVERY.get(env.GATEWAY_DELIVERY.idFromName("delivery"));
  const alarm = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
  expect(alarm).toBeGreaterThan(started);
  await abortAllDurableObjects();
  const delivered = await waitFor(async () => {
    const got = (await received("/slow")).filter((r) => r.body.includes(eventId));
    return got.length > 0 ? got : undefined;
  });
  expect(delivered).toHaveLength(1);
});
