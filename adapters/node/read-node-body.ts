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
import { type RawBodyResult, readRawBody } from "../../src/ingress/read-raw-body.ts";
import { lingerAfterRefusal } from "./linger-after-refusal.ts";

type NodeBacked = Request & { runtime?: { node?: { req?: IncomingMessage } } };

/** First allocation for a body of unknown or large declared length. */
const INITIAL_CAPACITY = 16 * 1024;

export function readNodeBody(request: Request, limit: number, deadlineMs?: number): Promise<RawBodyResult> {
  const req = (request as NodeBacked).runtime?.node?.req;
  if (!req || request.bodyUsed || req.readableEnded || req.readableDidRead) {
    return readRawBody(request, limit, deadlineMs);
  }
  return readIncomingBody(req, limit, deadlineMs);
}

/** Reads an unread `IncomingMessage`'s body (what `readNodeBody` does once it found one). */
export function readIncomingBody(req: IncomingMessage, limit: number, deadlineMs?: number): Promise<RawBodyResult> {
  const declaredText = req.headers["content-length"];
  const declared = declaredText === undefined ? undefined : Number(declaredText);
  // The rest of a refused body is read and thrown away, bounded, so the client reads the 413
  // before the connection closes (linger-after-refusal.ts).
  if (declared !== undefined && declared > limit) {
    lingerAfterRefusal(req);
    return Promise.resolve({ ok: false, reason: "too_large" });
  }
  const ceiling = declared ?? limit;
  return new Promise((resolve, reject) => {
    let buffer = Buffer.allocUnsafe(Math.min(ceiling, INITIAL_CAPACITY));
    let size = 0;
    const timer =
      deadlineMs === undefined
        ? undefined
        : setTimeout(() => {
            cleanup();
            req.pause();
            resolve({ ok: false, reason: "timeout" });
          }, deadlineMs);
    const cleanup = () => {
      if (timer) clearTimeout(timer);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      const needed = size + chunk.length;
      if (needed > limit) {
        cleanup();
        lingerAfterRefusal(req);
        resolve({ ok: false, reason: "too_large" });
        return;
      }
      if (needed > buffer.length) {
        const grown = Buffer.allocUnsafe(Math.min(Math.max(needed, buffer.length * 2), Math.max(ceiling, needed)));
        buffer.copy(grown, 0, 0, size);
        buffer = grown;
      }
      chunk.copy(buffer, size);
      size = needed;
    };
    const onEnd = () => {
      cleanup();
      resolve({ ok: true, bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, size) });
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      // An AbortError: the client went away, nothing failed here (logged at info, not error).
      if (!req.complete) reject(new DOMException("client closed the connection before the body ended", "AbortError"));
    };
    req.on("data", onData).once("end", onEnd).once("error", onError).once("close", onClose);
  });
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
