/**
 * Strict W3C Trace Context parsing (docs/tracing.md#context-that-survives-the-store): a
 * `traceparent` is version 00 of exactly 55 characters (a later version is read as its first four
 * fields and passed on as 00); anything else is no context at all, never kept on the event nor
 * sent on. A `tracestate` that is not a valid list is dropped whole. Unit cases, then a real
 * gateway process (tracing off, so the stored context is the caller's) with an http destination.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseTraceparent, parseTracestate, readTraceHeaders } from "../../src/tracing/trace-context.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { type SinkReceiver, startSinkReceiver } from "../helpers/http-sink-receiver.ts";
import { adminGet, adminKeyHash, esignDelivery, postWebhook } from "../helpers/signed-requests.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";
const VALID = `00-${TRACE}-${SPAN}-01`;
const JUNK = `${VALID}-${"x".repeat(190)}`;

describe("parseTraceparent", () => {
  test.each([
    [VALID, VALID],
    [`00-${TRACE}-${SPAN}-00`, `00-${TRACE}-${SPAN}-00`],
    [JUNK, undefined],
    [`${VALID}-`, undefined],
    [`${VALID} `, undefined],
    [`00-${TRACE.toUpperCase()}-${SPAN}-01`, undefined],
    [`00-${"0".repeat(32)}-${SPAN}-01`, undefined],
    [`00-${TRACE}-${"0".repeat(16)}-01`, undefined],
    [`ff-${TRACE}-${SPAN}-01`, undefined],
    [`00-${TRACE}-${SPAN}-1`, undefined],
    [`${VALID}, ${VALID}`, undefined],
    // A later version: its first four fields, as version 00 with the sampled flag only.
    [`01-${TRACE}-${SPAN}-03`, `00-${TRACE}-${SPAN}-01`],
    [`cc-${TRACE}-${SPAN}-02-what-the-future-holds`, `00-${TRACE}-${SPAN}-00`],
    [`cc-${TRACE}-${SPAN}-01x`, undefined],
    ["", undefined],
  ])("%s -> %s", (input, expected) => {
    expect(parseTraceparent(input)).toBe(expected);
  });
});

describe("parseTracestate", () => {
  test.each([
    ["vendor=abc", "vendor=abc"],
    ["a=1 , b@tenant=2,,", "a=1,b@tenant=2"],
    ["a=1,a=2", undefined],
    ["A=1", undefined],
    ["a=", undefined],
    ["a=b=c", undefined],
    ["=x", undefined],
    ["a=\u00e9", undefined],
    [`a=${"v".repeat(600)}`, undefined],
    [Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","), undefined],
  ])("%s -> %s", (input, expected) => {
    expect(parseTracestate(input)).toBe(expected);
  });

  test("an invalid tracestate leaves the traceparent; an invalid traceparent takes the tracestate with it", () => {
    expect(readTraceHeaders(new Headers({ traceparent: VALID, tracestate: "a=1,a=2" }))).toEqual({
      traceparent: VALID,
    });
    expect(readTraceHeaders(new Headers({ traceparent: JUNK, tracestate: "a=1" }))).toBeUndefined();
  });
});

describe("a real gateway", () => {
  let gw: GatewayProcess;
  let sink: SinkReceiver;
  beforeAll(async () => {
    sink = await startSinkReceiver();
    const secrets = makeSecrets();
    const dataDir = await mkdtemp(join(tmpdir(), "gw-trace-strict-"));
    const config = {
      ...defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey)),
      destinations: [
        { id: "hook", type: "http", url: `${sink.url}/hook`, secrets: ["${TEST_WHSEC}"], allowCidrs: ["127.0.0.1/32"] },
      ],
      routes: [{ destinations: ["hook"] }],
    };
    gw = await startGatewayProcess({
      config,
      secrets,
      dataDir,
      env: { TEST_WHSEC: `whsec_${randomBytes(24).toString("base64")}` },
    });
  }, 60_000);
  afterAll(async () => {
    await gw?.kill();
    await sink?.close();
  });

  /** Posts a webhook with `headers`; the recorded event and the headers its delivery carried. */
  async function deliver(headers: Record<string, string>) {
    const answer = await postWebhook(gw.url, "esign", await esignDelivery(gw.secrets.esign), headers);
    expect(answer.status).toBe(202);
    const { id } = (await answer.json()) as { id: string };
    const recorded = await adminGet(gw.url, `/events/${id}`, gw.secrets.adminKey);
    for (let i = 0; i < 600; i++) {
      const received = (await (await fetch(`${sink.url}/received?path=/hook`)).json()) as {
        body: string;
        headers: Record<string, string>;
      }[];
      const hit = received.find((r) => r.body.includes(id));
      if (hit) return { event: recorded.body.event as Record<string, unknown>, sent: hit.headers };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the delivery of ${id} did not arrive`);
  }

  test("a traceparent with trailing junk is neither stored nor forwarded", async () => {
    const { event, sent } = await deliver({ traceparent: JUNK, tracestate: "vendor=abc" });
    expect(event.traceparent).toBeUndefined();
    expect(event.tracestate).toBeUndefined();
    expect(sent.traceparent).toBeUndefined();
    expect(sent.tracestate).toBeUndefined();
  });

  test("a valid context is kept and forwarded; an invalid tracestate is dropped alone", async () => {
    const good = await deliver({ traceparent: VALID, tracestate: "vendor=abc" });
    expect(good.event).toMatchObject({ traceparent: VALID, tracestate: "vendor=abc" });
    expect(good.sent).toMatchObject({ traceparent: VALID, tracestate: "vendor=abc" });
    const badState = await deliver({ traceparent: VALID, tracestate: "a=1,a=2" });
    expect(badState.event.traceparent).toBe(VALID);
    expect(badState.event.tracestate).toBeUndefined();
    expect(badState.sent.tracestate).toBeUndefined();
  });

  test("a later version is stored and sent as its version-00 form", async () => {
    const { event, sent } = await deliver({ traceparent: `01-${TRACE}-${SPAN}-03-more` });
    expect(event.traceparent).toBe(VALID);
    expect(sent.traceparent).toBe(VALID);
  });
});
