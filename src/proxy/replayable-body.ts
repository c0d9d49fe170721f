/**
 * Request bodies on their way upstream. A body up to the upstream's replay limit is buffered, so
 * the call can be sent again (a 401 token refresh, a retry); a larger one streams through once,
 * with backpressure, so a 20 MB PDF never sits in the gateway's memory.
 */
import { concatBytes } from "../encoding/concat-bytes.ts";

export type ProxyBody =
  | { kind: "none" }
  | { kind: "buffered"; bytes: Uint8Array<ArrayBuffer> }
  | { kind: "stream"; stream: ReadableStream<Uint8Array>; length?: string }
  /** The runtime's own unread body (Node: the `IncomingMessage`), passed to its `upstreamFetch` as is. */
  | { kind: "native"; body: unknown; length: string };

/** How the runtime reads bodies; both optional (Web streams otherwise). */
export interface ProxyBodyReaders {
  readBody?: (request: Request, limit: number) => Promise<{ ok: true; bytes: Uint8Array } | { ok: false }>;
  nativeRequestBody?: (request: Request) => unknown;
}

/** A stream that yields `head` first, then the rest of `reader`, pulling only on demand. */
function prepend(head: Uint8Array[], reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  const queue = [...head];
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = queue.shift();
      if (next) return controller.enqueue(next);
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * Reads at most `limit` bytes of the request body to decide whether it can be replayed. A body
 * whose declared length decides it goes the runtime's way when it has one: read whole by
 * `readBody`, or handed on unread as `nativeRequestBody`.
 */
export async function prepareProxyBody(
  request: Request,
  limit: number,
  readers: ProxyBodyReaders = {},
): Promise<ProxyBody> {
  if (request.method === "GET" || request.method === "HEAD") return { kind: "none" };
  const length = request.headers.get("content-length") ?? undefined;
  if (length !== undefined && Number(length) > limit) {
    const native = readers.nativeRequestBody?.(request);
    if (native !== undefined) return { kind: "native", body: native, length };
  } else if (length !== undefined && readers.readBody) {
    // The declared length is within the limit, so the whole body is read and can be replayed.
    const read = await readers.readBody(request, limit);
    if (!read.ok) throw new RangeError("the request body did not match its declared length");
    return { kind: "buffered", bytes: read.bytes as Uint8Array<ArrayBuffer> };
  }
  if (!request.body) return { kind: "none" };
  if (length !== undefined && Number(length) > limit) return { kind: "stream", stream: request.body, length };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size <= limit) {
    const { done, value } = await reader.read();
    if (done) return { kind: "buffered", bytes: concatBytes(chunks, size) };
    chunks.push(value);
    size += value.byteLength;
  }
  return { kind: "stream", stream: prepend(chunks, reader), length };
}
