/**
 * The script each transform context runs before the transform's module is compiled: a
 * `console` that keeps the first 20 lines of a call, the `begin`/`run`/`collect` entry points the host
 * calls, and a lockdown that freezes every intrinsic and the global object, so a call cannot
 * leave anything behind for the next one (module-level state is fresh per call, module-source.ts).
 * Properties that user code commonly assigns on its own objects (`name`, `message`, `toString`,
 * `constructor`) stay assignable on instances through accessors, as SES's lockdown does.
 */
export const SANDBOX_PRELUDE = `(() => {
  "use strict";
  const MAX_LINES = 20;
  const MAX_LINE = 1000;
  let logs = [];
  let pending;
  const show = (value) => {
    if (typeof value === "string") return value;
    try {
      const json = JSON.stringify(value);
      return json === undefined ? String(value) : json;
    } catch {
      return String(value);
    }
  };
  const log = (...args) => {
    if (logs.length < MAX_LINES) logs.push(args.map(show).join(" ").slice(0, MAX_LINE));
  };
  Object.defineProperty(globalThis, "console", {
    value: { log, info: log, warn: log, error: log, debug: log },
    enumerable: false,
  });
  const describe = (error) => {
    try {
      if (error instanceof Error) return error.name + ": " + error.message;
      return "the transform threw " + show(error);
    } catch {
      return "the transform threw";
    }
  };
  // Answers: "J" + the result's JSON when nothing was logged (the common case, one string and no
  // second encoding), "S" for a skip, else "A" + a JSON object with the fields and the logs.
  const answer = (fields) => "A" + JSON.stringify({ ...fields, logs });
  const settle = (value) => {
    if (value === null) return logs.length === 0 ? "S" : answer({ skip: true });
    if (value === undefined) return answer({ error: "the transform returned undefined (return null to skip the event)" });
    let json;
    try {
      json = JSON.stringify(value);
    } catch (error) {
      return answer({ error: "the result is not JSON-serialisable (" + describe(error) + ")" });
    }
    if (typeof json !== "string") return answer({ error: "the result is not JSON-serialisable" });
    return logs.length === 0 ? "J" + json : answer({ json });
  };
  // The event's data and the received headers are parsed on first read: parsing is most of a
  // call's cost, and many transforms read neither. The property keeps its place and acts as a
  // plain one (reads give the same object, writes replace it). One frozen getter and setter per
  // key serve every call: what they read is kept in WeakMaps under the object, so defining the
  // property allocates no closures and leaves no cycle behind (an object and its JSON go together).
  const shared = [];
  const lazyJson = (key) => {
    const jsonOf = new WeakMap();
    const valueOf = new WeakMap();
    const ownerOf = (object) => {
      let owner = object;
      while (owner !== null && typeof owner === "object" && !jsonOf.has(owner)) owner = Object.getPrototypeOf(owner);
      return owner;
    };
    const descriptor = {
      get() {
        const owner = ownerOf(this);
        if (owner === null || typeof owner !== "object") return undefined;
        if (valueOf.has(owner)) return valueOf.get(owner);
        const value = JSON.parse(jsonOf.get(owner));
        valueOf.set(owner, value);
        return value;
      },
      set(next) {
        Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
      },
      enumerable: true,
      configurable: true,
    };
    shared.push(descriptor.get, descriptor.set);
    return (target, json) => {
      jsonOf.set(target, json);
      Object.defineProperty(target, key, descriptor);
      return target;
    };
  };
  const lazyData = lazyJson("data");
  const lazyHeaders = lazyJson("headers");
  // One string per call (each string the host creates costs a copy and a handle): the attempt,
  // then the destination, the headers, the envelope and the data as JSON texts, one a line (JSON
  // text never holds a raw line feed); an empty last line when the event has no data.
  // A call is two host calls under one time budget: begin runs the module's top level, run calls
  // the default export it returned (so the host can say which of the two used the budget up).
  let begun;
  const begin = (factory) => {
    logs = [];
    pending = undefined;
    begun = undefined;
    try {
      const transform = factory();
      if (typeof transform !== "function") return answer({ error: "the default export is not a function" });
      begun = transform;
      return "";
    } catch (error) {
      return answer({ error: describe(error) });
    }
  };
  const run = (payload) => {
    const transform = begun;
    begun = undefined;
    if (transform === undefined) return answer({ error: "no call ran" });
    const lines = payload.split("\\n");
    if (lines.length !== 5) return answer({ error: "the gateway sent a malformed call" });
    let value;
    try {
      const context = { destination: JSON.parse(lines[1]), attempt: Number(lines[0]), headers: null };
      const event = JSON.parse(lines[3]);
      if (lines[4] !== "") lazyData(event, lines[4]);
      value = transform(event, lazyHeaders(context, lines[2]));
    } catch (error) {
      return answer({ error: describe(error) });
    }
    if (value !== null && typeof value === "object" && typeof value.then === "function") {
      const state = { done: false, answer: "" };
      pending = state;
      Promise.resolve(value).then(
        (settled) => { state.done = true; state.answer = settle(settled); },
        (error) => { state.done = true; state.answer = answer({ error: describe(error) }); },
      );
      return "pending";
    }
    return settle(value);
  };
  const collect = () =>
    pending && pending.done ? pending.answer : answer({ error: pending ? "the transform's promise did not settle" : "no call ran" });

  const assignable = (proto, key) => {
    const found = Object.getOwnPropertyDescriptor(proto, key);
    if (!found || !("value" in found)) return;
    const value = found.value;
    Object.defineProperty(proto, key, {
      get() { return value; },
      set(next) {
        if (this === proto) throw new TypeError("Cannot assign to read only property '" + String(key) + "'");
        Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
      },
      enumerable: found.enumerable,
      configurable: false,
    });
  };
  for (const key of ["toString", "constructor", "valueOf", "toJSON"]) assignable(Object.prototype, key);
  for (const E of [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError]) {
    for (const key of ["name", "message", "constructor", "toString"]) assignable(E.prototype, key);
  }
  const seen = new WeakSet();
  const freeze = (value) => {
    if ((typeof value !== "object" && typeof value !== "function") || value === null || seen.has(value)) return;
    seen.add(value);
    Object.freeze(value);
    freeze(Object.getPrototypeOf(value));
    for (const key of Reflect.ownKeys(value)) {
      const property = Object.getOwnPropertyDescriptor(value, key);
      if (!property) continue;
      if ("value" in property) freeze(property.value);
      else {
        freeze(property.get);
        freeze(property.set);
      }
    }
  };
  // Intrinsics no global name reaches: generator, async and iterator prototypes.
  const hidden = [
    function* () {},
    async function () {},
    async function* () {},
    (function* () {})(),
    (async function* () {})(),
    [][Symbol.iterator](),
    new Map()[Symbol.iterator](),
    new Set()[Symbol.iterator](),
    ""[Symbol.iterator](),
    /a/[Symbol.matchAll]("a"),
    Promise.resolve(),
  ];
  for (const value of hidden) freeze(value);
  freeze(begin);
  freeze(run);
  freeze(collect);
  for (const accessor of shared) freeze(accessor);
  freeze(globalThis);
  return { begin, run, collect };
})()`;
