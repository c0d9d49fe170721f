/**
 * The sandbox call on the real QuickJS module: what a transform sees of the event and the
 * context after they cross into the sandbox as one string (quickjs-sandbox.ts, sandbox-prelude.ts).
 */
import { describe, expect, it } from "vitest";
import { loadQuickJSNode } from "../../adapters/node/quickjs-node.ts";
import { toFactorySource } from "../../src/transform/module-source.ts";
import { compileTransform } from "../../src/transform/quickjs-sandbox.ts";
import { toTransformEvent } from "../../src/transform/transform-contract.ts";

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

describe("what timeoutMs counts (the module's top level and the program together, one budget)", () => {
  it("a module whose top level takes 4 x timeoutMs fails at its top level, the program never called", async () => {
    // Used to answer (the top level had its own 1 s): a module's start-up runs before every call,
    // so it counts in the call's budget.
    const transform = await compile(slowTopLevel(400, "export default (event) => ({ type: event.type });"), 100);
    let called = false;
    const outcome = transform.run(toTransformEvent({ id: "e", type: "t.slow-start" }), context, () => {
      called = true;
    });
    expect(outcome).toEqual({
      ok: false,
      message: "the transform module's top level ran longer than 100 ms",
      logs: [],
    });
    expect(called).toBe(false);
    transform.dispose();
  });

  it("the top level and the program share the budget: each under it, together over it, the call fails", async () => {
    // 150 ms of top level, then 150 ms of program, with timeoutMs 200: each part alone fits, the
    // two do not (whichever part is running when the budget runs out is named).
    const transform = await compile(
      slowTopLevel(
        150,
        "export default () => { const until = Date.now() + 150; while (Date.now() < until) {} return { done: true }; };",
      ),
      200,
    );
    const outcome = transform.run(toTransformEvent({ id: "e", type: "t" }), context);
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.message).toMatch(/^the transform (module's top level )?ran longer than 200 ms$/);
    transform.dispose();
  });

  it("an endless program is ended at timeoutMs, its top level's logs and its own kept", async () => {
    const transform = await compile(
      'const TABLE = Object.fromEntries(Array.from({ length: 200 }, (_, i) => ["k" + i, i]));\nconsole.log("started", TABLE.k7);\nexport default () => { console.log("looping"); for (;;) {} };',
      100,
    );
    let called = false;
    const outcome = transform.run(toTransformEvent({ id: "e", type: "t" }), context, () => {
      called = true;
    });
    expect(outcome).toEqual({
      ok: false,
      message: "the transform ran longer than 100 ms",
      logs: ["started 7", "looping"],
    });
    expect(called).toBe(true);
    // The runtime was thrown away and is built again: the next call runs (and is ended) the same way.
    expect(transform.run(toTransformEvent({ id: "e", type: "t" }), context)).toMatchObject({
      ok: false,
      message: "the transform ran longer than 100 ms",
    });
    transform.dispose();
  });

  it("an endless top level is ended at timeoutMs (50 ms), the program never called; the next call too", async () => {
    const transform = await compile(
      'console.log("starting");\nfor (;;) {}\nexport default () => ({ never: true });',
      50,
    );
    let called = false;
    const outcome = transform.run(toTransformEvent({ id: "e", type: "t" }), context, () => {
      called = true;
    });
    expect(outcome).toEqual({
      ok: false,
      message: "the transform module's top level ran longer than 50 ms",
      logs: ["starting"],
    });
    expect(called).toBe(false);
    expect(transform.run(toTransformEvent({ id: "e", type: "t" }), context)).toEqual(outcome);
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
