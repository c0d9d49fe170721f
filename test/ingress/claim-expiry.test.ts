/**
 * An "in progress" claim left behind by a request that never recorded (a crash between claim
 * and append) blocks copies with 409 in_progress only until `claimTtlSeconds` have passed; then
 * a retry takes over and is accepted. In process, with an injected clock (no sleeps).
 */
import { expect, it } from "vitest";
import { toDedupeKey } from "../../src/store/contract.ts";
import { esignDelivery, expectErrorEnvelope, readAnswer, webhookRequest } from "../helpers/signed-requests.ts";
import { createTestGateway, IN_PROCESS_ORIGIN } from "./gateway-fixtures.ts";

it("answers 409 in_progress while a dead claim lives, 202 once the clock passes claimTtlSeconds", async () => {
  const gw = createTestGateway({ claimTtlSeconds: 30 });
  const uniqueId = crypto.randomUUID();
  const delivery = await esignDelivery(gw.secrets.esign, "agreement.completed", { uniqueId });
  // The crashed request: it claimed the identity and died before appending.
  const key = toDedupeKey("esign", `evt-${uniqueId}`);
  expect(await gw.store.claim(key, 30_000)).toEqual({ status: "claimed" });

  const send = () => gw.gateway.fetch(webhookRequest(IN_PROCESS_ORIGIN, "esign", delivery));
  for (const advance of [0, 10_000, 19_999]) {
    gw.advance(advance);
    const response = await send();
    expect(response.headers.get("retry-after")).toBe("1");
    await expectErrorEnvelope(response, 409, "in_progress");
  }
  gw.advance(1); // exactly claimTtlSeconds after the claim
  const accepted = await readAnswer(await send());
  expect(accepted).toMatchObject({ status: 202, body: { duplicate: false } });
  expect(await readAnswer(await send())).toMatchObject({
    status: 200,
    body: { id: accepted.body.id, duplicate: true },
  });
  const list = (await (await gw.request("/events")).json()) as { events: { id: string }[] };
  expect(list.events.map((e) => e.id)).toEqual([accepted.body.id]);
});

it("gives its own claims the configured claimTtlSeconds when the append never finishes", async () => {
  const gw = createTestGateway({ claimTtlSeconds: 5 });
  const append = gw.store.append.bind(gw.store);
  let calls = 0;
  let reached: () => void = () => {};
  const appendReached = new Promise<void>((resolve) => {
    reached = resolve;
  });
  // The first append hangs forever: the request holding the claim is as good as crashed.
  gw.store.append = (...args) => {
    if (calls++ > 0) return append(...args);
    reached();
    return new Promise(() => {});
  };
  const delivery = await esignDelivery(gw.secrets.esign, "agreement.signed");
  const send = () => gw.gateway.fetch(webhookRequest(IN_PROCESS_ORIGIN, "esign", delivery));

  void send();
  await appendReached;
  gw.advance(4_999);
  await expectErrorEnvelope(await send(), 409, "in_progress");
  gw.advance(1);
  expect((await send()).status).toBe(202);
});
