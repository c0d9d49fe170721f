/**
 * What the in-process A/B harnesses (lane-cpu.ts, sink-cpu.ts, and the medians of
 * delivery-cpu-ab.ts, ingress-cpu-ab.ts, group-commit-cpu.ts) share: the checkouts named on the
 * command line, the `BENCH_SEND_THREAD` choice, a recorded e-sign event as the router hands it
 * to a lane, and the median of a round's figures.
 */
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { buildEsignBody } from "../../src/services/esign/esign-samples.ts";
import type { EventRecord } from "../../src/store/contract.ts";

/** `<name>=<checkout dir>` arguments (none: this checkout, named `this`). */
export function checkoutsOf(args: readonly string[]): { name: string; dir: string }[] {
  return (args.length > 0 ? args : [`this=${process.cwd()}`]).map((arg) => {
    const [name, dir = "."] = arg.split("=", 2) as [string, string?];
    return { name, dir: resolve(dir) };
  });
}

/** `BENCH_SEND_THREAD=on|off` picks the http sink's send thread over the default for the machine's cores. */
export function sendThreadChoice(
  env: Record<string, string | undefined> = process.env,
): { inThread: boolean } | undefined {
  return env.BENCH_SEND_THREAD === undefined ? undefined : { inThread: env.BENCH_SEND_THREAD !== "on" };
}

/** A recorded `agreement.signed` e-sign event (`seq` n + 1, a fresh id, body unique by `uniqueId`). */
export function esignEventRecord(
  n: number,
  uniqueId: string,
  options: { subject: string; headers: Record<string, string> },
): EventRecord {
  const body = buildEsignBody("agreement.signed", { uniqueId });
  const id = `evt_${randomBytes(16).toString("hex")}`;
  const now = new Date().toISOString();
  return {
    id,
    seq: n + 1,
    sourceId: "esign",
    identity: String(body.event_id),
    receivedAt: Date.now(),
    event: {
      specversion: "1.0",
      id,
      source: "/webhooks/esign",
      type: "agreement.signed",
      subject: options.subject,
      time: now,
      datacontenttype: "application/json",
      data: body,
      service: "esign",
      upstreamid: String(body.event_id),
      upstreamidkind: "event_id",
      receivedtime: now,
    },
    rawBody: JSON.stringify(body),
    rawBodyEncoding: "utf8",
    headers: options.headers,
    marks: [],
  };
}

/** The median (the upper one of an even count). */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
