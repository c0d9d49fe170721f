/**
 * The headers of an `http` attempt: the fixed ones (content type, the destination's own, the user
 * agent) are built once per destination, so every attempt must still get its own object.
 */
import { describe, expect, it } from "vitest";
import { buildWebhookRequest, USER_AGENT } from "../../src/delivery/http/build-webhook-request.ts";
import type { DeliverableRecord } from "../../src/delivery/sink-contract.ts";

const destination = {
  url: "https://receiver.example/hook",
  mode: "cloudevent" as const,
  secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
  headers: { authorization: "Bearer t", "user-agent": "not ours" },
};

function record(id: string): DeliverableRecord {
  return { id, event: { specversion: "1.0", id, source: "s", type: "t" } } as unknown as DeliverableRecord;
}

describe("buildWebhookRequest headers", () => {
  it("gives each attempt its own headers; trace headers do not leak into the next attempt", async () => {
    const traced = await buildWebhookRequest(destination, record("a"), 1_700_000_000_000, undefined, {
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    });
    const plain = await buildWebhookRequest(destination, record("b"), 1_700_000_001_000);
    expect(traced.headers).not.toBe(plain.headers);
    expect(traced.headers.traceparent).toBeDefined();
    expect(plain.headers.traceparent).toBeUndefined();
    expect(plain.headers).toMatchObject({
      "content-type": "application/cloudevents+json; charset=utf-8",
      authorization: "Bearer t",
      "user-agent": USER_AGENT,
      "webhook-id": "b",
      "webhook-timestamp": "1700000001",
    });
    expect(traced.headers["webhook-id"]).toBe("a");
    expect(plain.headers["webhook-signature"]).toMatch(/^v1,/);
  });

  it("uses the transformed payload's content type, and a destination header may override it", async () => {
    const transformed = { ...record("c"), transformed: { json: '{"x":1}' } } as DeliverableRecord;
    const request = await buildWebhookRequest(destination, transformed, 1_700_000_000_000);
    expect(request.headers["content-type"]).toBe("application/json");
    expect(new TextDecoder().decode(request.body)).toBe('{"x":1}');
    const own = { ...destination, headers: { "content-type": "text/plain" } };
    expect((await buildWebhookRequest(own, record("d"), 0)).headers["content-type"]).toBe("text/plain");
    expect((await buildWebhookRequest(own, transformed, 0)).headers["content-type"]).toBe("text/plain");
  });
});
