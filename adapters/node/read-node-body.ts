/**
 * The Node body reader: reads the raw bytes straight from the `IncomingMessage` behind srvx's
 * Request (its `runtime.node.req`), skipping the Web-stream conversion that otherwise costs more
 * than verifying the signature. Same contract as the core's `readRawBody` (exact bytes, refuse
 * past the limit without buffering it); falls back to it when no Node request is behind.
 */
import type { IncomingMessage } from "node:http";
import { type RawBodyResult, readRawBody } from "../../src/ingress/read-raw-body.ts";

type NodeBacked = Request & { runtime?: { node?: { req?: IncomingMessage } } };

export function readNodeBody(request: Request, limit: number): Promise<RawBodyResult> {
  const req = (request as NodeBacked).runtime?.node?.req;
  if (!req || request.bodyUsed || req.readableEnded || req.readableDidRead) return readRawBody(request, limit);
  const declared = req.headers["content-length"];
  // The rest of a refused body is left unread: destroying the socket would lose the 413.
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve({ ok: false, reason: "too_large" });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        resolve({ ok: false, reason: "too_large" });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      resolve({ ok: true, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      if (!req.complete) reject(new Error("client closed the connection before the body ended"));
    };
    req.on("data", onData).once("end", onEnd).once("error", onError).once("close", onClose);
  });
}
