/**
 * Transforms inside workerd, with the QuickJS WebAssembly bundled as a module: the delivery
 * object's engine reshapes (signed over the transformed bytes, verified with the Standard
 * Webhooks library), skips, formats Slack, and turns an endless loop, a memory bomb and a throw
 * into dead letters with `transform_error` while the other destinations deliver; probes find
 * nothing of the host; `POST /transforms/test` answers from the Worker itself, and a module whose
 * top level never ends fails within its `timeoutMs` there too.
 */
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { ESCAPE_PROBE_FINDS_NOTHING } from "../transform/transform-fixtures.ts";
import { admin, esignBody, postEsign, type Received, received, waitFor } from "./gateway-client.ts";

async function record(type: string): Promise<{ id: string; eventId: string }> {
  const { body, eventId } = esignBody("evt-transform", type);
  const response = await postEsign(body);
  expect(response.status).toBe(202);
  return { id: ((await response.json()) as { id: string }).id, eventId };
}

const arrivedAt = (path: string, eventId: string) =>
  waitFor(async () => {
    const got = (await received(path)).filter((r: Received) => r.headers["webhook-id"] === eventId);
    return got.length > 0 ? got : undefined;
  });

interface DeliveryJson {
  event_id: string;
  state: string;
  attempts: {
    ok: boolean;
    code?: string;
    error: string | null;
    transform?: string;
    logs?: string[];
    skipped?: boolean;
  }[];
}

const deliveryOf = (destination: string, id: string, state: string) =>
  waitFor(async () => {
    const page = (await (await admin(`/destinations/${destination}/deliveries?state=${state}&limit=100`)).json()) as {
      deliveries: DeliveryJson[];
    };
    return page.deliveries.find((d) => d.event_id === id);
  });

describe("transforms in workerd", () => {
  it("reshapes, skips, formats Slack, and dead-letters the limits while others deliver", async () => {
    const sent = await record("agreement.sent");
    const viewed = await record("agreement.viewed");
    const wh = new Webhook(env.WORKERD_TEST_WHSEC);

    const [reshaped] = await arrivedAt("/t-reshape", sent.id);
    expect(wh.verify(reshaped?.body as string, reshaped?.headers as Record<string, string>)).toEqual({
      kind: "agreement.sent",
      agreement: "ag-w",
      destination: "t-reshape",
      attempt: 1,
      signature: "[redacted]",
    });
    const [slack] = await arrivedAt("/t-slack", sent.id);
    const message = wh.verify(slack?.body as string, slack?.headers as Record<string, string>) as { text: string };
    expect(message.text).toBe("Agreement sent: ag-w");

    // Skip by content: viewed is skipped, sent passes unchanged.
    expect(JSON.parse(((await arrivedAt("/t-skip", sent.id))[0] as Received).body).id).toBe(sent.id);
    const skipped = await deliveryOf("t-skip", viewed.id, "skipped");
    expect(skipped?.attempts[0]).toMatchObject({ ok: true, skipped: true });
    expect((await received("/t-skip")).filter((r) => r.headers["webhook-id"] === viewed.id)).toHaveLength(0);

    for (const [destination, error] of [
      ["t-loop", "transform_error: the transform ran longer than 100 ms"],
      ["t-bomb", "transform_error: the transform used more than 8 MiB"],
      ["t-throws", "transform_error: Error: no mapping for agreement.sent"],
    ] as const) {
      const dead = await deliveryOf(destination, sent.id, "dead");
      expect(dead?.attempts).toHaveLength(1);
      expect(dead?.attempts[0]).toMatchObject({ ok: false, code: "transform_error", error });
      expect(dead?.attempts[0]?.transform).toMatch(/^sha256:[0-9a-f]{16}$/);
    }
    expect((await deliveryOf("t-throws", sent.id, "dead"))?.attempts[0]?.logs).toHaveLength(20);

    // The plain http destination of agreement.* got the event meanwhile (route of vitest.workers.config.ts).
    const [hook] = await waitFor(async () => {
      const got = (await received("/hook")).filter((r) => r.headers["webhook-id"] === sent.id);
      return got.length > 0 ? got : undefined;
    });
    expect(JSON.parse(hook?.body ?? "{}")).toMatchObject({ id: sent.id, type: "agreement.sent" });

    const probe = JSON.parse(((await arrivedAt("/t-escape", sent.id))[0] as Received).body);
    expect(probe.found).toEqual(ESCAPE_PROBE_FINDS_NOTHING);
    expect([probe.globalWrite, probe.prototypeWrite]).toEqual(["refused", "refused"]);
  });

  it("runs a transform on a recorded event through POST /transforms/test", async () => {
    const { id } = await record("agreement.sent");
    const response = await admin("/transforms/test", {
      method: "POST",
      body: JSON.stringify({ event: id, code: "export default (e) => { console.log(e.type); return { id: e.id }; }" }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true, skipped: false, result: { id }, logs: ["agreement.sent"] });
  });

  it("a module whose top level loops for ever fails within its timeoutMs (50 ms) there too; the next call answers", async () => {
    const { id } = await record("agreement.sent");
    const endless = await admin("/transforms/test", {
      method: "POST",
      body: JSON.stringify({ event: id, code: "for (;;) {}\nexport default () => ({ never: true });", timeoutMs: 50 }),
    });
    expect(endless.status).toBe(200);
    const answer = (await endless.json()) as { ok: boolean; error?: { code: string; message: string } };
    expect(answer.ok).toBe(false);
    expect(answer.error?.code).toBe("transform_error");
    // Named for the top level when the object's own interrupt ended it (workerd's local clock
    // moves while code runs); the caller's deadline, which cannot tell the parts apart, names the call.
    expect(answer.error?.message).toMatch(/^the transform (module's top level )?ran longer than 50 ms$/);
    const next = await admin("/transforms/test", {
      method: "POST",
      body: JSON.stringify({ event: id, code: "export default (e) => ({ id: e.id });", timeoutMs: 50 }),
    });
    expect(await next.json()).toMatchObject({ ok: true, result: { id } });
  });
});
