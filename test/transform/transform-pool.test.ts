/**
 * One time budget per call through the Node worker pool (adapters/node/transform-pool.ts), as the
 * gateway's transform registry uses it: a module's top level runs before every call and counts in
 * the call's `timeoutMs`, in QuickJS's interrupt (inside the worker) and in the pool's outside
 * deadline (`timeoutMs` + slack from the start of the top level, the worker terminated). A hostile
 * top level fails its own call; the next call of a well-behaved transform on the same one-worker
 * pool answers. Which deadline ended a call is read from the pool's count of calls it ended from
 * outside and from the logs (the interrupt keeps the call's logs, a terminated worker has none),
 * never from a measured duration.
 */
import { afterAll, describe, expect, it } from "vitest";
import { loadQuickJSNode } from "../../adapters/node/quickjs-node.ts";
import { createTransformPool } from "../../adapters/node/transform-pool.ts";
import { builtinServices } from "../../src/services/registry.ts";
import { toTransformEvent } from "../../src/transform/transform-contract.ts";
import { createTransformRegistry } from "../../src/transform/transform-registry.ts";

// A generous slack, so that an ordinary loop is always ended by QuickJS's interrupt first, even
// on a loaded machine: the outside deadline is then reached only by calls no interrupt can end.
const pool = createTransformPool({ size: 1, slackMs: 2000 });
const registry = createTransformRegistry({
  destinations: [],
  services: builtinServices,
  loadQuickJS: loadQuickJSNode,
  executor: pool,
});
afterAll(() => registry.close());

const event = toTransformEvent({ specversion: "1.0", id: "evt_pool", type: "agreement.sent", data: { n: 1 } });
const context = { destination: "pool", attempt: 1, headers: {} };

const call = async (code: string, timeoutMs = 50) => {
  const transform = await registry.compile({ code, timeoutMs, memoryLimitMb: 16 });
  return transform.run(event, context);
};

const WELL_BEHAVED = "export default (e) => ({ type: e.type, n: e.data.n });";
const answersAfter = async () =>
  expect(await call(WELL_BEHAVED)).toEqual({
    ok: true,
    skip: false,
    json: '{"type":"agreement.sent","n":1}',
    logs: [],
  });

/** One `indexOf` that runs for minutes: QuickJS checks its interrupt between bytecode steps, never inside it. */
const STUCK = "'a'.repeat(1e6).indexOf('a'.repeat(5e5) + 'b')";

describe("the pool's one budget: a module's top level counts in timeoutMs", () => {
  it("a top level that loops for ever (timeoutMs 50) is ended by the interrupt, named for the top level; the next call answers", async () => {
    const ended = pool.endedFromOutside();
    const outcome = await call('console.log("starting");\nfor (;;) {}\nexport default () => ({ never: true });');
    expect(outcome).toEqual({
      ok: false,
      message: "the transform module's top level ran longer than 50 ms",
      logs: ["starting"],
    });
    // Inside the worker: no worker was terminated.
    expect(pool.endedFromOutside()).toBe(ended);
    await answersAfter();
  }, 120_000);

  it("a top level stuck inside one built-in is ended from outside, named for the top level; a new worker takes the next call", async () => {
    const ended = pool.endedFromOutside();
    const outcome = await call(`console.log("starting");\nconst i = ${STUCK};\nexport default () => ({ i });`);
    expect(outcome).toEqual({
      ok: false,
      message: "the transform module's top level ran longer than 50 ms",
      logs: [],
    });
    expect(pool.endedFromOutside()).toBe(ended + 1);
    await answersAfter();
    expect(pool.endedFromOutside()).toBe(ended + 1);
  }, 120_000);

  it("a program stuck inside one built-in after its top level is named for the program", async () => {
    const ended = pool.endedFromOutside();
    const outcome = await call(`const TABLE = [1, 2, 3];\nexport default () => ({ i: ${STUCK}, t: TABLE });`);
    expect(outcome).toEqual({ ok: false, message: "the transform ran longer than 50 ms", logs: [] });
    expect(pool.endedFromOutside()).toBe(ended + 1);
    await answersAfter();
  }, 120_000);

  it("hostile and well-behaved calls alternate on one worker: every hostile call fails alone", async () => {
    const hostile = "for (;;) {}\nexport default () => ({ never: true });";
    const outcomes = [];
    for (let round = 0; round < 5; round++) {
      outcomes.push(await call(hostile), await call(WELL_BEHAVED));
    }
    expect(outcomes.filter((o) => o.ok)).toHaveLength(5);
    expect(
      outcomes.filter((o) => !o.ok && o.message === "the transform module's top level ran longer than 50 ms"),
    ).toHaveLength(5);
  }, 120_000);
});
