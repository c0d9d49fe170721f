/**
 * A transform's console lines stay out of the process log by default (issue 31): a failing
 * stream transform is logged with its error and the number of lines, the lines themselves only
 * with `transforms.logToProcess`. The Node worker pool runs the call, as `gateway serve` does.
 */

import * as v from "valibot";
import { afterAll, describe, expect, it } from "vitest";
import { loadQuickJSNode } from "../../adapters/node/quickjs-node.ts";
import { createTransformPool } from "../../adapters/node/transform-pool.ts";
import { createLogger } from "../../src/ops/logger.ts";
import { builtinServices } from "../../src/services/registry.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { createStreamEventTransform } from "../../src/transform/stream-event-transform.ts";
import { createTransformRegistry } from "../../src/transform/transform-registry.ts";
import { TransformsSettingsSchema } from "../../src/transform/transform-schema.ts";

const LEAKY = `export default (event) => { console.log("customer " + event.data.email); throw new Error("no"); };`;

const record = {
  id: "evt_1",
  seq: 1,
  sourceId: "esign",
  identity: "u1",
  receivedAt: 0,
  event: { id: "evt_1", type: "agreement.sent", source: "esign", data: { email: "jane@example.com" } },
  rawBody: "{}",
  rawBodyEncoding: "utf8",
  headers: {},
  marks: [],
} as unknown as EventRecord;

const registry = createTransformRegistry({
  destinations: [{ id: "live", transform: { code: LEAKY, timeoutMs: 1000, memoryLimitMb: 16 } }],
  services: builtinServices,
  loadQuickJS: loadQuickJSNode,
  executor: createTransformPool({ size: 1 }),
});
afterAll(() => registry.close());

async function logOf(logToProcess: boolean | undefined): Promise<string> {
  const lines: string[] = [];
  const transform = createStreamEventTransform(
    registry,
    createLogger("debug", (line) => lines.push(line)),
    logToProcess,
  );
  expect(await transform(record, "live")).toBeNull();
  return lines.join("\n");
}

describe("transform console lines and the process log", () => {
  it("are left out by default, with the error and their count kept", async () => {
    const log = await logOf(undefined);
    expect(log).toContain("stream transform failed");
    expect(log).toContain("transform_error: Error: no");
    expect(log).toContain('"logLines":1');
    expect(log).not.toContain("jane@example.com");
  }, 120_000);

  it("are copied with transforms.logToProcess", async () => {
    expect(await logOf(true)).toContain("customer jane@example.com");
  }, 120_000);

  it("the settings' defaults: lines off, 100 ms slack, 64 MiB heap, pool size from the CPU count", () => {
    expect(v.parse(TransformsSettingsSchema, {})).toEqual({
      deadlineSlackMs: 100,
      workerHeapMb: 64,
      logToProcess: false,
    });
    expect(v.safeParse(TransformsSettingsSchema, { workers: 0 }).success).toBe(false);
    expect(v.safeParse(TransformsSettingsSchema, { deadlineSlackMs: 5 }).success).toBe(false);
  });
});
