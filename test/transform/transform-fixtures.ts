/**
 * Transform modules the process tests configure: a reshape, a skip by content, the three limits
 * (endless loop, memory bomb, throw with logs), a module probing for ways out of the sandbox and
 * one that keeps module-level state (which must not survive from one call to the next).
 */

/** Keeps the type, the agreement id and the context; drops everything else. */
export const RESHAPE = `
export default function reshape(event, context) {
  return {
    kind: event.type,
    agreement: event.data.agreement_id ?? null,
    destination: context.destination,
    attempt: context.attempt,
    signature: context.headers["x-svc-signature"] ?? null,
  };
}`;

/** Skips completed agreements, passes the others on unchanged. */
export const SKIP_COMPLETED = `export default (event) => (event.type === "agreement.completed" ? null : event);`;

export const ENDLESS_LOOP = `export default () => { console.log("about to spin"); for (;;) {} };`;

export const MEMORY_BOMB = `export default () => { let a = [1]; for (;;) a = a.concat(a); };`;

/** Throws after 25 console lines: the attempt keeps the first 20. */
export const THROWS = `
export default (event) => {
  for (let i = 1; i <= 25; i++) console.log("line", i, event.type);
  throw new Error("no mapping for " + event.type);
};`;

/** Reports what it finds of the host: every probe should find nothing. */
export const ESCAPE_PROBE = `
const probe = (f) => { try { const v = f(); return v === undefined ? "undefined" : typeof v; } catch (e) { return "threw " + e.name; } };
export default function escape() {
  const found = {
    process: typeof process,
    require: typeof require,
    fetch: typeof fetch,
    setTimeout: typeof setTimeout,
    XMLHttpRequest: typeof XMLHttpRequest,
    WebSocket: typeof WebSocket,
    importScripts: typeof importScripts,
    functionTrick: probe(() => (function () {}).constructor("return process")()),
    thisTrick: probe(() => this.constructor.constructor("return process")()),
    evalTrick: probe(() => (0, eval)("typeof process === 'undefined' ? undefined : process")),
    dynamicImport: "import" in globalThis ? "present" : "absent",
  };
  let globalWrite = "refused";
  try { globalThis.leak = 1; globalWrite = "allowed"; } catch {}
  let prototypeWrite = "refused";
  try { Object.prototype.leak = 1; prototypeWrite = "allowed"; } catch {}
  return { found, globals: Reflect.ownKeys(globalThis).map(String).sort(), globalWrite, prototypeWrite };
}`;

/** What `ESCAPE_PROBE`'s `found` must say, on Node and in workerd alike: nothing of the host. */
export const ESCAPE_PROBE_FINDS_NOTHING = {
  process: "undefined",
  require: "undefined",
  fetch: "undefined",
  setTimeout: "undefined",
  XMLHttpRequest: "undefined",
  WebSocket: "undefined",
  importScripts: "undefined",
  functionTrick: "threw ReferenceError",
  thisTrick: "threw TypeError",
  evalTrick: "undefined",
  dynamicImport: "absent",
};

/** Counts calls in a module-level variable: every call must see 1. */
export const COUNTER = `let calls = 0; export default () => ({ calls: ++calls });`;
