/**
 * The body of the HTTP send thread (http-send-thread.ts): the wire half of `http` deliveries.
 * Each destination's transport here is the in-thread one (http-transport.ts's `createHttpTransport`: the
 * keep-alive undici Agent, the SSRF guard at connect, the literal refusal, the deadline, the
 * drain cap, no redirects), so what goes on the wire is decided by the same code either way.
 * Requests arrive in batches (one message per turn of the main thread); answers go back the same
 * way. A lane's shutdown signal is mirrored here by one AbortController per signal.
 */
import { parentPort } from "node:worker_threads";
import type { HttpSendResult, HttpTransport } from "../../src/delivery/http/http-sink.ts";
import { createHttpTransport, type HttpTransportOptions } from "./http-transport.ts";

/** One operation of a batch from the main thread. */
export type SendOp =
  | { op: "open"; transport: number; options: Omit<HttpTransportOptions, "resolve"> }
  | {
      op: "send";
      transport: number;
      id: number;
      signal: number;
      timeoutMs: number;
      url: string;
      headers: Record<string, string>;
      body: Uint8Array;
    }
  | { op: "abort"; signal: number }
  | { op: "close"; transport: number };

/** One answer of a batch to the main thread: a send's result, or a transport closed. */
export type SendAnswer = { id: number; result: HttpSendResult } | { closed: number };

const port = parentPort;
if (!port) throw new Error("http-send-worker.ts runs as a worker thread of http-send-thread.ts");

const transports = new Map<number, HttpTransport>();
const signals = new Map<number, AbortController>();
let answers: SendAnswer[] = [];
let flushing = false;

const flush = () => {
  flushing = false;
  const batch = answers;
  answers = [];
  port.postMessage(batch);
};
const answer = (entry: SendAnswer) => {
  answers.push(entry);
  if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
};

const signalOf = (id: number): AbortSignal => {
  let controller = signals.get(id);
  if (!controller) {
    controller = new AbortController();
    signals.set(id, controller);
  }
  return controller.signal;
};

const closedTransport: HttpSendResult = { ok: false, failure: "network", detail: "transport closed" };

function run(op: SendOp): void {
  switch (op.op) {
    case "open":
      transports.set(op.transport, createHttpTransport(op.options));
      return;
    case "send": {
      const transport = transports.get(op.transport);
      const { id } = op;
      if (!transport) {
        answer({ id, result: closedTransport });
        return;
      }
      transport
        .send(
          { url: op.url, headers: op.headers, body: op.body },
          { signal: signalOf(op.signal), timeoutMs: op.timeoutMs },
        )
        .then(
          (result) => answer({ id, result }),
          (error: Error) => answer({ id, result: { ok: false, failure: "network", detail: error.name } }),
        );
      return;
    }
    case "abort": {
      const controller = signals.get(op.signal) ?? new AbortController();
      signals.delete(op.signal);
      controller.abort(new Error("attempt aborted"));
      return;
    }
    case "close": {
      const transport = transports.get(op.transport);
      transports.delete(op.transport);
      const closed = op.transport;
      (transport ? transport.close() : Promise.resolve()).then(
        () => answer({ closed }),
        () => answer({ closed }),
      );
      return;
    }
  }
}

port.on("message", (batch: SendOp[]) => {
  for (const op of batch) run(op);
});
