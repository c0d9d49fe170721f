/**
 * `http` deliveries' wire work off the main thread, on Node: one worker thread per process
 * (http-send-worker.ts) holds every destination's undici Agent and makes the sends; the main
 * thread keeps the lane, the retries, the order, the attempt records and the outbox writes, and
 * builds and signs each request (so the signed bytes are the same as in-thread). What the main
 * thread pays per attempt is its share of one message each way per turn: requests made in one
 * turn go in one batch, their answers come back in batches too.
 *
 * If the thread fails or exits, its attempts in flight answer as network failures (the lane
 * retries them as any transport error) and a new thread starts on the next send, with every open
 * destination's transport made again there.
 */
import { Worker } from "node:worker_threads";
import type { WebhookRequest } from "../../src/delivery/http/build-webhook-request.ts";
import type { HttpSendResult, HttpTransport } from "../../src/delivery/http/http-sink.ts";
import type { SendAnswer, SendOp } from "./http-send-worker.ts";
import type { HttpTransportOptions } from "./http-transport.ts";

// Compiled (dist/): the worker's own JavaScript. As TypeScript: an entry that loads it, through
// tsx when this process passes no loader flag on to its workers.
const ENTRY = import.meta.url.endsWith(".js")
  ? new URL("./http-send-worker.js", import.meta.url)
  : new URL("./http-send-worker-entry.mjs", import.meta.url);

type Settle = (result: HttpSendResult) => void;

/** The process's send thread, started when the first transport opens, made again after a failure. */
class SendThread {
  #worker: Worker | undefined;
  #ops: SendOp[] = [];
  #flushing = false;
  readonly #pending = new Map<number, Settle>();
  /** The options of each open transport: sent again to a new thread. */
  readonly #open = new Map<number, Omit<HttpTransportOptions, "resolve">>();
  readonly #closing = new Map<number, () => void>();
  readonly #signals = new WeakMap<AbortSignal, number>();
  /** Messages posted to the thread and sends they carried (tests, benchmarks). */
  readonly posted = { messages: 0, sends: 0 };
  #nextId = 1;
  #nextTransport = 1;
  #nextSignal = 1;

  /** Opens a destination's transport in the thread, starting the thread now (its start is not an attempt's time). */
  open(options: Omit<HttpTransportOptions, "resolve">): number {
    const transport = this.#nextTransport++;
    this.#open.set(transport, options);
    if (this.#worker) this.#push({ op: "open", transport, options });
    else this.#start();
    return transport;
  }

  close(transport: number): Promise<void> {
    if (!this.#open.delete(transport) || !this.#worker) return Promise.resolve();
    return new Promise((resolve) => {
      this.#closing.set(transport, resolve);
      this.#push({ op: "close", transport });
    });
  }

  send(transport: number, req: WebhookRequest, signal: AbortSignal, timeoutMs: number): Promise<HttpSendResult> {
    this.#start();
    const id = this.#nextId++;
    const op: SendOp = {
      op: "send",
      transport,
      id,
      signal: this.#signalId(signal),
      timeoutMs,
      url: req.url,
      headers: req.headers,
      // A view into a larger buffer (a pooled Buffer) would carry all of that buffer across.
      body: req.body.byteLength === req.body.buffer.byteLength ? req.body : req.body.slice(),
    };
    this.#push(op);
    // While attempts are in flight the thread keeps the process alive, as their sockets did in-thread.
    if (this.#pending.size === 0) this.#worker?.ref();
    return new Promise((resolve) => this.#pending.set(id, resolve));
  }

  /** The number of a lane's shutdown signal; its abort is passed on once. */
  #signalId(signal: AbortSignal): number {
    let id = this.#signals.get(signal);
    if (id === undefined) {
      const own = this.#nextSignal++;
      id = own;
      this.#signals.set(signal, own);
      signal.addEventListener("abort", () => this.#worker && this.#push({ op: "abort", signal: own }), { once: true });
    }
    return id;
  }

  #push(op: SendOp): void {
    this.#ops.push(op);
    if (!this.#flushing) {
      this.#flushing = true;
      setImmediate(this.#flush);
    }
  }

  readonly #flush = () => {
    this.#flushing = false;
    const batch = this.#ops;
    this.#ops = [];
    if (batch.length === 0 || !this.#worker) return;
    this.#worker.postMessage(batch);
    this.posted.messages++;
    for (const op of batch) if (op.op === "send") this.posted.sends++;
  };

  #start(): void {
    if (this.#worker) return;
    const worker = new Worker(ENTRY, { stdout: false, stderr: false });
    this.#worker = worker;
    worker.on("message", (batch: SendAnswer[]) => {
      for (const entry of batch) {
        if ("closed" in entry) {
          this.#closing.get(entry.closed)?.();
          this.#closing.delete(entry.closed);
          continue;
        }
        const settle = this.#pending.get(entry.id);
        this.#pending.delete(entry.id);
        settle?.(entry.result);
      }
      if (this.#pending.size === 0) worker.unref();
    });
    const lost = (why: string) => () => this.#lost(worker, why);
    worker.on("error", lost("failed"));
    worker.on("exit", lost("stopped"));
    // An idle thread does not keep the process alive (it is ref'd while attempts are in flight).
    // After the listeners: adding a "message" listener refs the worker's port again.
    if (this.#pending.size === 0) worker.unref();
    // Ops queued before the thread existed are sends and aborts: the transports go first.
    this.#ops.unshift(...[...this.#open].map(([transport, options]): SendOp => ({ op: "open", transport, options })));
    if (this.#ops.length > 0 && !this.#flushing) {
      this.#flushing = true;
      setImmediate(this.#flush);
    }
  }

  /** The thread is gone: its attempts fail as transport errors (retried), closes complete, the next send starts another. */
  #lost(worker: Worker, why: string): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    const failure: HttpSendResult = { ok: false, failure: "network", detail: `the send thread ${why}` };
    // Sends still queued here go to the next thread.
    const queued = new Set(this.#ops.map((op) => (op.op === "send" ? op.id : 0)));
    for (const [id, settle] of this.#pending) {
      if (queued.has(id)) continue;
      this.#pending.delete(id);
      settle(failure);
    }
    for (const resolve of this.#closing.values()) resolve();
    this.#closing.clear();
    // Queued sends (and the aborts behind them) go to a new thread now; the transports go first.
    this.#ops = this.#ops.filter((op) => op.op === "send" || op.op === "abort");
    if (this.#ops.length > 0) this.#start();
  }

  /** Tests: ends the thread as a crash would. */
  crashForTest(): Promise<number> {
    return this.#worker ? this.#worker.terminate() : Promise.resolve(0);
  }
}

let thread: SendThread | undefined;

/** The process's send thread (tests reach it to simulate a crash). */
export function sendThread(): SendThread {
  thread ??= new SendThread();
  return thread;
}

/** An `http` destination's transport whose sends run on the send thread. */
export function createThreadedHttpTransport(options: Omit<HttpTransportOptions, "resolve">): HttpTransport {
  const shared = sendThread();
  const transport = shared.open(options);
  return {
    send(req, { signal, timeoutMs }) {
      if (signal.aborted) return Promise.resolve({ ok: false, failure: "aborted", detail: "aborted" });
      return shared.send(transport, req, signal, timeoutMs);
    },
    close: () => shared.close(transport),
  };
}
