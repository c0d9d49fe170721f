/**
 * The Node body reader: reads the raw bytes straight from the `IncomingMessage` behind srvx's
 * Request (its `runtime.node.req`), skipping the Web-stream conversion that otherwise costs more
 * than verifying the signature. Same contract as the core's `readRawBody` (exact bytes, refuse
 * past the limit without buffering it, give up at the deadline); falls back to it when no Node
 * request is behind.
 *
 * Memory follows the bytes received, not the packets: each chunk is copied into one buffer that
 * grows by doubling (never past the declared length or the limit), so a body dripped one byte
 * per TCP packet costs about its own size rather than a Buffer object per byte
 * (docs/security-and-deployment.md#what-protects-what). A refused body's rest is discarded for a
 * bounded while (linger-after-refusal.ts).
 */
import type { IncomingMessage } from "node:http";
import type { BodyLease } from "../../src/ingress/body-budget.ts";
import { type RawBodyResult, readRawBody } from "../../src/ingress/read-raw-body.ts";
import { lingerAfterRefusal } from "./linger-after-refusal.ts";

type NodeBacked = Request & { runtime?: { node?: { req?: IncomingMessage } } };

/** First allocation for a body of unknown or large declared length. */
const INITIAL_CAPACITY = 16 * 1024;

export function readNodeBody(
  request: Request,
  limit: number,
  deadlineMs?: number,
  lease?: BodyLease,
): Promise<RawBodyResult> {
  const req = (request as NodeBacked).runtime?.node?.req;
  if (!req || request.bodyUsed || req.readableEnded || req.readableDidRead) {
    return readRawBody(request, limit, deadlineMs, lease);
  }
  return readIncomingBody(req, limit, deadlineMs, lease);
}

/**
 * Reads an unread `IncomingMessage`'s body (what `readNodeBody` does once it found one), taking
 * its bytes from `lease` as they arrive when given (src/ingress/body-budget.ts).
 */
export function readIncomingBody(
  req: IncomingMessage,
  limit: number,
  deadlineMs?: number,
  lease?: BodyLease,
): Promise<RawBodyResult> {
  const declaredText = req.headers["content-length"];
  const declared = declaredText === undefined ? undefined : Number(declaredText);
  // The rest of a refused body is read and thrown away, bounded, so the client reads the 413
  // before the connection closes (linger-after-refusal.ts).
  if (declared !== undefined && declared > limit) {
    lingerAfterRefusal(req);
    return Promise.resolve({ ok: false, reason: "too_large" });
  }
  const arrived = declared === undefined ? undefined : takeArrivedBody(req, declared);
  if (arrived) {
    if (lease && !lease.take(arrived.byteLength)) {
      lingerAfterRefusal(req);
      return Promise.resolve({ ok: false, reason: "over_budget" });
    }
    return Promise.resolve({ ok: true, bytes: arrived });
  }
  return new Promise((resolve, reject) => {
    new IncomingBodyRead(req, limit, declared ?? limit, deadlineMs, lease, resolve, reject);
  });
}

/**
 * The whole body when every declared byte has already arrived (a webhook's body nearly always
 * comes in the packet of its headers, and Node's parser has buffered it on the request by the
 * time the guards ran): taken with one `read()`, the way Node documents consuming a request,
 * without listeners, a deadline timer, a flowing-mode switch or a copy. Undefined (nothing
 * consumed) otherwise: the body is then read as it streams in (`IncomingBodyRead`). The bytes
 * are the parser's own chunk (or one concatenation of its chunks), which Node never reuses.
 */
function takeArrivedBody(req: IncomingMessage, declared: number): Uint8Array | undefined {
  // Nothing read yet, nothing but this body buffered: exactly `declared` bytes, the limit checked.
  if (
    declared === 0 ||
    req.readableLength !== declared ||
    req.readableFlowing !== null ||
    req.readableDidRead ||
    req.readableEncoding !== null
  ) {
    return undefined;
  }
  const chunk = req.read(declared) as Buffer | null;
  if (chunk === null) return undefined;
  return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length);
}

/**
 * One body being read: its buffer and the listeners it put on the request. A class whose
 * listeners are assigned in the constructor rather than named closures: under tsx each named
 * closure costs a `__name` call, five per webhook here.
 */
class IncomingBodyRead {
  #req: IncomingMessage;
  #limit: number;
  #lease: BodyLease | undefined;
  /** The most the body can take: its declared length, else the limit. */
  #ceiling: number;
  #buffer: Buffer;
  #size = 0;
  #timer: NodeJS.Timeout | undefined;
  #resolve: (result: RawBodyResult) => void;
  #reject: (error: unknown) => void;
  #onData: (chunk: Buffer) => void;
  #onEnd: () => void;
  #onError: (error: Error) => void;
  #onClose: () => void;

  constructor(
    req: IncomingMessage,
    limit: number,
    ceiling: number,
    deadlineMs: number | undefined,
    lease: BodyLease | undefined,
    resolve: (result: RawBodyResult) => void,
    reject: (error: unknown) => void,
  ) {
    this.#req = req;
    this.#limit = limit;
    this.#lease = lease;
    this.#ceiling = ceiling;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#buffer = Buffer.allocUnsafe(Math.min(ceiling, INITIAL_CAPACITY));
    this.#timer = deadlineMs === undefined ? undefined : setTimeout(expire, deadlineMs, this);
    this.#onData = (chunk) => this.#data(chunk);
    this.#onEnd = () => this.#end();
    this.#onError = (error) => this.#error(error);
    this.#onClose = () => this.#close();
    req.on("data", this.#onData).once("end", this.#onEnd).once("error", this.#onError).once("close", this.#onClose);
  }

  #cleanup() {
    if (this.#timer) clearTimeout(this.#timer);
    const req = this.#req;
    req.off("data", this.#onData);
    req.off("end", this.#onEnd);
    req.off("error", this.#onError);
    req.off("close", this.#onClose);
  }

  /** The deadline passed: stop reading and answer `timeout`. */
  expire() {
    this.#cleanup();
    this.#req.pause();
    this.#resolve({ ok: false, reason: "timeout" });
  }

  #data(chunk: Buffer) {
    const needed = this.#size + chunk.length;
    if (needed > this.#limit) {
      this.#cleanup();
      lingerAfterRefusal(this.#req);
      this.#resolve({ ok: false, reason: "too_large" });
      return;
    }
    if (this.#lease && !this.#lease.take(chunk.length)) {
      this.#cleanup();
      lingerAfterRefusal(this.#req);
      this.#resolve({ ok: false, reason: "over_budget" });
      return;
    }
    let buffer = this.#buffer;
    if (needed > buffer.length) {
      const ceiling = this.#ceiling;
      const grown = Buffer.allocUnsafe(Math.min(Math.max(needed, buffer.length * 2), Math.max(ceiling, needed)));
      buffer.copy(grown, 0, 0, this.#size);
      buffer = grown;
      this.#buffer = grown;
    }
    chunk.copy(buffer, this.#size);
    this.#size = needed;
  }

  #end() {
    this.#cleanup();
    const buffer = this.#buffer;
    this.#resolve({ ok: true, bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, this.#size) });
  }

  #error(error: Error) {
    this.#cleanup();
    this.#reject(error);
  }

  #close() {
    this.#cleanup();
    // An AbortError: the client went away, nothing failed here (logged at info, not error).
    if (!this.#req.complete) {
      this.#reject(new DOMException("client closed the connection before the body ended", "AbortError"));
    }
  }
}

function expire(read: IncomingBodyRead) {
  read.expire();
}

/**
 * The unread `IncomingMessage` behind srvx's Request (`GatewayContext.nativeRequestBody`), for the
 * proxy to pipe a large upload upstream as it is; undefined once anything has read the body.
 */
export function nativeNodeRequestBody(request: Request): IncomingMessage | undefined {
  const req = (request as NodeBacked).runtime?.node?.req;
  if (!req || request.bodyUsed || req.readableEnded || req.readableDidRead) return undefined;
  return req;
}
