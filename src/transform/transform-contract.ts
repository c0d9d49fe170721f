/**
 * The transform contract (docs/transformations.md): what a compiled transform is given, what it
 * answers, and how a runtime hands the sandbox its QuickJS WebAssembly module (the Node and
 * Workers adapters load it differently; nothing in src/ loads WebAssembly itself).
 */
import type { QuickJSWASMModule } from "quickjs-emscripten-core";

/** A CloudEvent as JSON text, `data` apart (`toTransformEvent`): the sandbox parses it on first read. */
export interface TransformEvent {
  /** The event with `data: null` in data's place. */
  envelope: string;
  /** `data` as JSON; undefined when the event has none. */
  data?: string;
}

/** Splits a CloudEvent (or any JSON object) into what `CompiledTransform.run` takes. */
export function toTransformEvent(event: object): TransformEvent {
  if (!("data" in event) || (event as { data?: unknown }).data === undefined)
    return { envelope: JSON.stringify(event) };
  return {
    envelope: JSON.stringify({ ...event, data: null }),
    data: JSON.stringify((event as { data: unknown }).data),
  };
}

/** The second argument of `transform(event, context)`. */
export interface TransformContext {
  /** The destination's id. */
  destination: string;
  /** 1 for the first attempt, 2 for the first retry, ... */
  attempt: number;
  /** Received headers, lower-case names, credentials redacted. */
  headers: Record<string, string>;
}

export type TransformOutcome =
  /** The transform returned null: this destination skips the event. */
  | { ok: true; skip: true; logs: string[] }
  /** The payload to deliver as JSON, exactly as the transform serialised it. */
  | { ok: true; skip: false; json: string; logs: string[] }
  /** A throw, the time or memory limit, or a result that is not JSON. */
  | { ok: false; message: string; logs: string[] };

/** One transform module, compiled once, callable many times with nothing shared between calls. */
export interface CompiledTransform {
  /** `sha256:` + the first 16 hex digits of the module source's SHA-256. */
  readonly version: string;
  /**
   * Runs the transform on one event within the time and memory limits: the module's top level,
   * then the default export, both within one `timeoutMs` counted from the start of the top level.
   * `programStarted` is called, synchronously, right before the default export is (a host that
   * ends the call from outside names the part that overran with it).
   */
  run(event: TransformEvent, context: TransformContext, programStarted?: () => void): TransformOutcome;
  /** Builds the runtime now if the last call discarded it, so the next `run` starts at once. */
  prepare(): void;
  /** Bytes the sandbox holds for this transform between calls. */
  memoryBytes(): number;
  dispose(): void;
}

/** Limits of one transform. */
export interface TransformLimits {
  timeoutMs: number;
  memoryLimitMb: number;
}

/** One call handed to a `TransformExecutor`: the compiled-once module and this call's input. */
export interface TransformCall {
  /** Names the module and its limits: calls with the same key share a compiled transform. */
  key: string;
  /** The factory source (module-source.ts). */
  source: string;
  version: string;
  limits: TransformLimits;
  event: TransformEvent;
  context: TransformContext;
}

/**
 * Runs transform calls away from the caller's event loop (a worker-thread pool on Node, a
 * Durable Object on Workers) and ends a call that outlives its deadline from outside. Never
 * rejects: a stalled, crashed or killed call answers `{ ok: false }`.
 */
export interface TransformExecutor {
  run(call: TransformCall): Promise<TransformOutcome>;
  close(): void;
}

/** A destination's transform as callers use it, wherever it runs. */
export interface PreparedTransform {
  readonly version: string;
  run(event: TransformEvent, context: TransformContext): Promise<TransformOutcome>;
  dispose(): void;
}

/** Supplies the QuickJS module (loaded once per process or isolate, on first use). */
export type LoadQuickJS = () => Promise<QuickJSWASMModule>;
