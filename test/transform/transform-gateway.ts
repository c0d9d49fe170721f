/**
 * The set-up of the transform tests against a real gateway process (transform-process.test.ts,
 * transform-no-stall.test.ts): one webhook receiver per destination, each destination's http
 * entry with its transform, and a client that posts signed webhooks and reads an event's
 * deliveries back through the admin API.
 */
import { expect } from "vitest";
import type { fanoutConfig } from "../delivery/helpers/process-fixtures.ts";
import { startWebhookReceiver, type WebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, postWebhook } from "../helpers/signed-requests.ts";

/** An attempt as GET /events/:id lists it. */
export interface AttemptJson {
  ok: boolean;
  error?: string;
  code?: string;
  skipped?: boolean;
  transform?: string;
  logs?: string[];
}

/** One receiver per destination id; `cleanup` is given their closes. */
export async function startReceivers(
  ids: readonly string[],
  cleanup: (() => Promise<unknown>)[],
): Promise<Map<string, WebhookReceiver>> {
  const receivers = new Map<string, WebhookReceiver>();
  for (const id of ids) {
    const receiver = await startWebhookReceiver();
    receivers.set(id, receiver);
    cleanup.push(() => receiver.close());
  }
  return receivers;
}

/** Each destination's entry: its receiver's URL, `retry`, and its transform when it has one. */
export function transformDestinations(
  receivers: Map<string, WebhookReceiver>,
  transforms: Record<string, unknown>,
  retry: { schedule: number[]; jitter: number },
): Parameters<typeof fanoutConfig>[2] {
  return [...receivers].map(([id, receiver]) => ({
    id,
    url: receiver.url,
    retry,
    ...(transforms[id] ? { transform: transforms[id] } : {}),
  }));
}

/** The requests receiver `id` got for event `eventId`. */
export function receivedBy(receivers: Map<string, WebhookReceiver>, id: string, eventId: string) {
  return (receivers.get(id) as WebhookReceiver).requests.filter((r) => r.headers["webhook-id"] === eventId);
}

/** Posts signed e-sign webhooks to `gateway` and reads their deliveries with `adminKey`. */
export function transformClient(gateway: () => GatewayProcess, adminKey: string) {
  /** Posts one webhook (202 expected); `ms`: how long its answer took. */
  async function post(type: string, subjectId: string): Promise<{ id: string; ms: number }> {
    const delivery = await esignDelivery(gateway().secrets.esign, type, { subjectId });
    const started = performance.now();
    const response = await postWebhook(gateway().url, "esign", delivery);
    const ms = performance.now() - started;
    expect(response.status).toBe(202);
    return { id: ((await response.json()) as { id: string }).id, ms };
  }
  async function deliveriesOf(id: string) {
    const response = await fetch(`${gateway().url}/events/${id}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const body = (await response.json()) as {
      deliveries: { destination: string; state: string; attempts: AttemptJson[] }[];
    };
    return new Map(body.deliveries.map((d) => [d.destination, d]));
  }
  /** Waits until each named destination's delivery of `id` is in its state; resolves with the deliveries. */
  async function settled(id: string, states: Record<string, string>) {
    await waitFor(
      `deliveries of ${id} to settle`,
      async () => {
        const deliveries = await deliveriesOf(id);
        return Object.entries(states).every(([destination, state]) => deliveries.get(destination)?.state === state);
      },
      120_000,
    );
    return deliveriesOf(id);
  }
  return { post, deliveriesOf, settled };
}
