/**
 * Erasure on Workers reaches the delivery object's attempt records: a transform that logs the
 * participant's address and throws `cannot map <address>` dead-letters the event in the delivery
 * object's outbox; after `POST /events/erase` by subject, neither the deliveries API nor any
 * table of the delivery object (outbox) or of the store shard holds the address, while the
 * delivery's history (state, failure code) stays readable.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { admin, postEsign, waitFor } from "./gateway-client.ts";

/** Every row of every table of a Durable Object's SQL storage, as text. */
const allRows = (stub: Parameters<typeof runInDurableObject>[0]) =>
  runInDurableObject(stub, (_instance, state) => {
    const sql = state.storage.sql;
    const tables = sql
      .exec(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
      )
      .toArray()
      .map((row) => String(row.name));
    return JSON.stringify(tables.map((table) => [table, sql.exec(`SELECT * FROM "${table}"`).toArray()]));
  });

const deliveryObject = () => env.GATEWAY_DELIVERY.get(env.GATEWAY_DELIVERY.idFromName("delivery"));
const storeShard = () => env.GATEWAY_STORE.get(env.GATEWAY_STORE.idFromName("store:0/1"));

interface DeliveryJson {
  event_id: string;
  state: string;
  last_error: string | null;
  attempts: { ok: boolean; code?: string; error: string | null; logs?: string[] }[];
}

const deadDelivery = (id: string) =>
  waitFor(async () => {
    const page = (await (await admin("/destinations/t-leaky/deliveries?state=dead&limit=100")).json()) as {
      deliveries: DeliveryJson[];
    };
    return page.deliveries.find((d) => d.event_id === id);
  });

describe("erasure on Workers", () => {
  it("scrubs the delivery object's attempt records of the erased events", async () => {
    const marker = `zzw${crypto.randomUUID().replaceAll("-", "")}`;
    const email = `${marker}@erasure.example`;
    const agreement = `ag-leaky-${crypto.randomUUID()}`;
    const participant = { id: "p-1", email };
    const body = JSON.stringify({
      event: "agreement.erasure-probe",
      event_type: "agreement.erasure-probe",
      event_id: `evt-leaky-${crypto.randomUUID()}`,
      agreement_id: agreement,
      participant,
      data: { participant },
    });
    const response = await postEsign(body);
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };

    const before = await deadDelivery(id);
    expect(before.attempts[0]?.error).toContain(`cannot map ${email}`);
    expect(before.attempts[0]?.logs?.join("\n")).toContain(email);
    expect(await allRows(deliveryObject())).toContain(marker);

    const erased = await admin("/events/erase", {
      method: "POST",
      body: JSON.stringify({ subject: `agreements/${agreement}` }),
    });
    expect(erased.status).toBe(200);
    expect(await erased.json()).toMatchObject({ events: 1, already_erased: 0 });

    const after = await deadDelivery(id);
    expect(after).toMatchObject({ state: "dead", last_error: "(erased with the event)" });
    expect(after.attempts[0]).toMatchObject({ ok: false, code: "transform_error", error: "(erased with the event)" });
    expect(after.attempts[0]?.logs).toBeUndefined();
    const answers = JSON.stringify([
      await (await admin("/destinations/t-leaky/deliveries?limit=100")).json(),
      await (await admin(`/events/${id}`)).json(),
      await (await admin("/destinations")).json(),
    ]);
    expect(answers).not.toContain(marker);
    expect(await allRows(deliveryObject())).not.toContain(marker);
    expect(await allRows(storeShard())).not.toContain(marker);
  });
});
