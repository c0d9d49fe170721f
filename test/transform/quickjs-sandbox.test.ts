/**
 * The sandbox call on the real QuickJS module: what a transform sees of the event and the
 * context after they cross into the sandbox as one string (quickjs-sandbox.ts, sandbox-prelude.ts).
 */
import { describe, expect, it } from "vitest";
import { loadQuickJSNode } from "../../adapters/node/quickjs-node.ts";
import { toFactorySource } from "../../src/transform/module-source.ts";
import { compileTransform } from "../../src/transform/quickjs-sandbox.ts";
import { MODULE_TOP_LEVEL_MS, toTransformEvent } from "../../src/transform/transform-contract.ts";

async function compile(code: string, timeoutMs = 1000) {
  const factory = toFactorySource(code);
  if (!factory.ok) throw new Error(factory.message);
  return compileTransform(await loadQuickJSNode(), factory.source, "sha256:test", { timeoutMs, memoryLimitMb: 16 });
}

/** A module whose top level (its start-up, run before every call) takes `ms` of wall-clock time. */
const slowTopLevel = (ms: number, program: string) =>
  `const until = Date.now() + ${ms}; while (Date.now() < until) {}\nconsole.log("started");\n${program}`;

const context = { destination: 'hook "1"\nsecond line', attempt: 3, headers: { "x-note": "naïve ☃ 𝄞 \u2028" } };

describe("the QuickJS sandbox call", () => {
  it("passes the event, its data and the context through unchanged, non-ASCII text included", async () => {
    const transform = await compile(
      "export default (event, context) => ({ event, context, keys: Object.keys(event) });",
    );
    const event = { id: "e1", type: "t.é", data: { text: "ünïcødé 𝄞", list: [1, null, "\n"] }, subject: "s" };
    const outcome = transform.run(toTransformEvent(event), context);
    expect(outcome.ok && !outcome.skip && JSON.parse(outcome.json)).toEqual({
      event,
      context,
      keys: ["id", "type", "data", "subject"],
    });
    transform.dispose();
  });

  it("reads data from a frozen event, and keeps nothing of one call's event for the next", async () => {
    const transform = await compile(`export default (event) => {
      Object.freeze(event);
      const getter = Object.getOwnPropertyDescriptor(event, "data").get;
      let shared = "refused";
      try { getter.leak = event.data; shared = "allowed"; } catch {}
      return { a: event.data.a, shared, before: getter.leak === undefined };
    };`);
    for (const a of [1, 2]) {
      const outcome = transform.run(toTransformEvent({ id: "e", data: { a } }), context);
      expect(outcome.ok && !outcome.skip && JSON.parse(outcome.json)).toEqual({ a, shared: "refused", before: true });
    }
    transform.dispose();
  });

  it("gives an event without data no data property", async () => {
    const transform = await compile('export default (event) => ({ has: "data" in event, event });');
    const outcome = transform.run(toTransformEvent({ id: "e2", type: "t" }), context);
    expect(outcome.ok && !outcome.skip && JSON.parse(outcome.json)).toEqual({
      has: false,
      event: { id: "e2", type: "t" },
    });
    transform.dispose();
  });

  it("reads data and headers as plain properties: the same object on each read, replaced on write", async () => {
    const transform = await compile(`export default (event, context) => {
      const same = event.data === event.data && context.headers === context.headers && Object.create(event).data === event.data;
      event.data.added = 1;
      const kept = event.data.added;
      event.data = { replaced: true };
      context.headers = "none";
      return { same, kept, event, headers: context.headers };
    };`);
    const outcome = transform.run(toTransformEvent({ id: "e3", data: { a: 1 }, type: "t" }), context);
    expect(outcome.ok && !outcome.skip && JSON.parse(outcome.json)).toEqual({
      same: true,
      kept: 1,
      event: { id: "e3", data: { replaced: true }, type: "t" },
      headers: "none",
    });
    transform.dispose();
  });
});

describe("what timeoutMs counts (the program's run, from the call of the default export)", () => {
  it("a module whose top level takes 4 x timeoutMs: its first call on a fresh sandbox answers", async () => {
    const transform = await compile(slowTopLevel(400, "export default (event) => ({ type: event.type });"), 100);
    const called: number[] = [];
    const outcome = transform.run(toTransformEvent({ id: "e", type: "t.slow-start" }), context, () =>
      called.push(Date.now()),
    );
    expect(outcome).toEqual({ ok: true, skip: false, json: '{"type":"t.slow-start"}', logs: ["started"] });
    expect(called).toHaveLength(1);
    transform.dispose();
  });

  it("an endless program is still ended at its timeoutMs, after a slow top level", async () => {
    const transform = await compile(
      slowTopLevel(300, 'export default () => { console.log("looping"); for (;;) {} };'),
      100,
    );
    const outcome = transform.run(toTransformEvent({ id: "e", type: "t" }), context);
    expect(outcome).toEqual({
      ok: false,
      message: "the transform ran longer than 100 ms",
      logs: ["started", "looping"],
    });
    // The runtime was thrown away and is built again: the next call runs (and is ended) the same way.
    expect(transform.run(toTransformEvent({ id: "e", type: "t" }), context)).toMatchObject({
      ok: false,
      message: "the transform ran longer than 100 ms",
    });
    transform.dispose();
  });

  it("an endless top level is ended at its own limit, the program never called", async () => {
    const transform = await compile("for (;;) {}\nexport default () => ({ never: true });", 50);
    let called = false;
    const outcome = transform.run(toTransformEvent({ id: "e", type: "t" }), context, () => {
      called = true;
    });
    expect(outcome).toEqual({
      ok: false,
      message: `the transform module's top level ran longer than ${MODULE_TOP_LEVEL_MS} ms`,
      logs: [],
    });
    expect(called).toBe(false);
    transform.dispose();
  });

  it("a top level that throws, or exports no function, answers as before, the program never called", async () => {
    const throwing = await compile('throw new Error("no start");\nexport default () => 1;');
    expect(throwing.run(toTransformEvent({ id: "e" }), context)).toEqual({
      ok: false,
      message: "Error: no start",
      logs: [],
    });
    const notAFunction = await compile("export default 42;");
    expect(notAFunction.run(toTransformEvent({ id: "e" }), context)).toEqual({
      ok: false,
      message: "the default export is not a function",
      logs: [],
    });
    throwing.dispose();
    notAFunction.dispose();
  });
});
