/**
 * Transforms in a real gateway process (docs/transformations.md): signed webhooks in, the
 * receivers' requests out. A reshape is signed per Standard Webhooks over the transformed bytes;
 * `null` skips; the built-in Slack body verifies; an endless loop, a memory bomb and a throw end
 * in dead letters with `transform_error` while a plain destination gets every event and
 * `/healthz` keeps answering; probes find nothing of the host; a fixed file replays.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWhsecSecret } from "../delivery/helpers/in-process-gateway.ts";
import { fanoutConfig, makeDataDir } from "../delivery/helpers/process-fixtures.ts";
import type { WebhookReceiver } from "../delivery/helpers/webhook-receiver.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import {
  COUNTER,
  ENDLESS_LOOP,
  ESCAPE_PROBE,
  ESCAPE_PROBE_FINDS_NOTHING,
  MEMORY_BOMB,
  RESHAPE,
  SKIP_COMPLETED,
  THROWS,
} from "./transform-fixtures.ts";
import { receivedBy, startReceivers, transformClient, transformDestinations } from "./transform-gateway.ts";

const DESTINATIONS = ["plain", "reshape", "skip", "slack", "loop", "bomb", "throws", "escape", "counter", "fixable"];

let gateway: GatewayProcess;
let whsec: string;
let fixableFile: string;
let receivers: Map<string, WebhookReceiver>;
const cleanup: (() => Promise<unknown>)[] = [];

const transforms: Record<string, unknown> = {
  reshape: { code: RESHAPE },
  skip: { code: SKIP_COMPLETED },
  slack: { builtin: "slack" },
  loop: { code: ENDLESS_LOOP, timeoutMs: 200 },
  bomb: { code: MEMORY_BOMB, memoryLimitMb: 8, timeoutMs: 1000 },
  throws: { code: THROWS },
  escape: { code: ESCAPE_PROBE },
  counter: { code: COUNTER },
};

async function start(dataDir: string) {
  const config = fanoutConfig(
    dataDir,
    gatewayAdminKey,
    transformDestinations(
      receivers,
      { ...transforms, fixable: { file: fixableFile } },
      { schedule: [0.05, 0.05], jitter: 0 },
    ),
  );
  // `agreement.expired` goes to the endless loop (and the plain destination) only.
  const routes: Record<string, unknown>[] = [
    { types: ["agreement.sent", "agreement.completed", "agreement.declined"], destinations: DESTINATIONS },
    { types: ["agreement.expired"], destinations: ["loop", "plain"] },
  ];
  // A generous deadline slack: the loop ends by QuickJS's interrupt (with its logs) even on a
  // loaded machine; the host ending a call is test/transform/transform-no-stall.test.ts's case.
  Object.assign(config, { routes, transforms: { deadlineSlackMs: 2000 } });
  return startGatewayProcess({
    dataDir,
    secrets: { esign: "esign-secret-0123456789", staffing: "staffing-secret-0123456789", adminKey: gatewayAdminKey },
    env: { TEST_WHSEC: whsec },
    config,
  });
}

const gatewayAdminKey = `admin_transform_${Date.now()}`;
let dataDir: string;

const client = transformClient(() => gateway, gatewayAdminKey);
const { settled } = client;
const post = async (type: string, subjectId: string): Promise<string> => (await client.post(type, subjectId)).id;

beforeAll(async () => {
  whsec = makeWhsecSecret();
  receivers = await startReceivers(DESTINATIONS, cleanup);
  fixableFile = join(await mkdtemp(join(tmpdir(), "gw-transform-")), "fixable.js");
  await writeFile(fixableFile, `export default (event) => { throw new Error("not yet: " + event.type); };`);
  dataDir = await makeDataDir();
  gateway = await start(dataDir);
  cleanup.push(() => gateway.kill());
});

afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
}, 120_000);

const received = (id: string, eventId: string) => receivedBy(receivers, id, eventId);

describe("transforms in a gateway process", () => {
  it("reshapes, skips, formats Slack and fails the limits into dead letters while others deliver", async () => {
    const sent = await post("agreement.sent", "agr-1");
    const completed = await post("agreement.completed", "agr-2");
    const finals = {
      plain: "delivered",
      reshape: "delivered",
      slack: "delivered",
      loop: "dead",
      bomb: "dead",
      throws: "dead",
      escape: "delivered",
      counter: "delivered",
      fixable: "dead",
    };
    const first = await settled(sent, { ...finals, skip: "delivered" });
    const second = await settled(completed, { ...finals, skip: "skipped" });

    // Other destinations are unaffected.
    expect(received("plain", sent)).toHaveLength(1);
    expect(received("plain", completed)).toHaveLength(1);

    // Reshape: the body is the transform's JSON, signed over exactly those bytes.
    const wh = new Webhook(whsec);
    const [reshaped] = received("reshape", sent);
    expect(reshaped?.headers["content-type"]).toBe("application/json");
    expect(wh.verify(reshaped?.body as string, reshaped?.headers as Record<string, string>)).toEqual({
      kind: "agreement.sent",
      agreement: "agr-1",
      destination: "reshape",
      attempt: 1,
      signature: "[redacted]",
    });
    expect(reshaped?.headers["webhook-id"]).toBe(sent);

    // Skip: null for completed agreements, the event unchanged otherwise.
    expect(received("skip", completed)).toHaveLength(0);
    expect(second.get("skip")?.attempts[0]).toMatchObject({ ok: true, skipped: true });
    expect((JSON.parse(received("skip", sent)[0]?.body ?? "{}") as { id: string }).id).toBe(sent);
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toContain('gateway_deliveries_total{destination="skip",outcome="skipped"} 1');
    expect(metrics).toContain('gateway_deliveries_total{destination="throws",outcome="dead"} 2');

    // The built-in Slack format, verified like any signed delivery.
    const slack = wh.verify(
      received("slack", completed)[0]?.body as string,
      received("slack", completed)[0]?.headers as Record<string, string>,
    ) as { text: string; blocks: { type: string }[] };
    expect(slack.text).toMatch(/^Agreement completed: /);
    expect(slack.blocks.map((b) => b.type)).toEqual(["header", "section", "section", "context"]);

    // The limits: one attempt each (not retried), transform_error, logs, the version hash.
    for (const id of ["loop", "bomb", "throws"]) {
      expect(received(id, sent)).toHaveLength(0);
      const attempts = first.get(id)?.attempts ?? [];
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({ ok: false, code: "transform_error" });
      expect(attempts[0]?.transform).toMatch(/^sha256:[0-9a-f]{16}$/);
    }
    expect(first.get("loop")?.attempts[0]?.error).toBe("transform_error: the transform ran longer than 200 ms");
    expect(first.get("loop")?.attempts[0]?.logs).toEqual(["about to spin"]);
    expect(first.get("bomb")?.attempts[0]?.error).toMatch(
      /^transform_error: .*(more than 8 MiB|out of memory|ran longer)/,
    );
    const thrown = first.get("throws")?.attempts[0];
    expect(thrown?.error).toBe("transform_error: Error: no mapping for agreement.sent");
    expect(thrown?.logs).toHaveLength(20);
    expect(thrown?.logs?.[0]).toBe("line 1 agreement.sent");

    // Escape attempts find nothing of the host.
    const probe = JSON.parse(received("escape", sent)[0]?.body ?? "{}");
    expect(probe.found).toEqual(ESCAPE_PROBE_FINDS_NOTHING);
    expect(probe.globalWrite).toBe("refused");
    expect(probe.prototypeWrite).toBe("refused");
    const hostNames = [
      "process",
      "require",
      "module",
      "fetch",
      "Deno",
      "Bun",
      "setTimeout",
      "queueMicrotask",
      "std",
      "os",
    ];
    expect(probe.globals.filter((name: string) => hostNames.includes(name))).toEqual([]);

    // No state survives from one call to the next.
    expect(JSON.parse(received("counter", sent)[0]?.body ?? "{}")).toEqual({ calls: 1 });
    expect(JSON.parse(received("counter", completed)[0]?.body ?? "{}")).toEqual({ calls: 1 });
  }, 300_000);

  it("answers /healthz while endless loops use their time budget, one call at a time", async () => {
    const healthz: number[] = [];
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const started = performance.now();
        const response = await fetch(`${gateway.url}/healthz`);
        await response.body?.cancel();
        expect(response.status).toBe(200);
        healthz.push(performance.now() - started);
      }
    })();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await post("agreement.expired", `agr-loop-${i}`));
    for (const id of ids) await settled(id, { loop: "dead", plain: "delivered" });
    polling = false;
    await poll;
    // Five loops of 200 ms each ran; no /healthz answer waited for more than about one of them.
    expect(healthz.length).toBeGreaterThan(5);
    expect(Math.max(...healthz)).toBeLessThan(1000);
    for (const id of ids) expect(received("plain", id)).toHaveLength(1);
  }, 300_000);

  it("delivers the dead letters on replay after the transform file is fixed", async () => {
    const id = await post("agreement.declined", "agr-3");
    const before = await settled(id, { fixable: "dead", plain: "delivered" });
    expect(before.get("fixable")?.attempts[0]?.error).toBe("transform_error: Error: not yet: agreement.declined");
    const brokenVersion = before.get("fixable")?.attempts[0]?.transform;

    await writeFile(fixableFile, `export default (event) => ({ fixed: event.type });`);
    await gateway.kill();
    gateway = await start(dataDir);
    cleanup.push(() => gateway.kill());
    const replay = await fetch(`${gateway.url}/events/${id}/replay`, {
      method: "POST",
      headers: { authorization: `Bearer ${gatewayAdminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ destination: "fixable" }),
    });
    expect(replay.status).toBeLessThan(300);
    const after = await settled(id, { fixable: "delivered" });
    const [delivered] = received("fixable", id);
    expect(JSON.parse(delivered?.body ?? "{}")).toEqual({ fixed: "agreement.declined" });
    const attempts = after.get("fixable")?.attempts ?? [];
    expect(attempts.at(-1)?.transform).not.toBe(brokenVersion);
  }, 300_000);
});
