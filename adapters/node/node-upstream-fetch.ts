/**
 * The API proxy's upstream `fetch` on Node: undici's `request` on one keep-alive Agent, wrapped
 * into the `fetch` shape the core uses. Node's built-in `fetch` implements the whole Fetch
 * standard per call and costs two to three times as much CPU per proxied request; the proxy
 * needs none of that (no redirects followed, no CORS, no cache). Bodies stream both ways with
 * backpressure; a streamed request body keeps its declared `Content-Length`. The timeout covers
 * the wait for the response headers once the body is sent (`armHeaderTimeout`).
 */
import { EventEmitter } from "node:events";
import { Readable } from "node:stream";
import { Agent, request } from "undici";
import type { UpstreamFetch } from "../../src/proxy/upstream-fetch.ts";
import { armHeaderTimeout, UpstreamTimeoutError } from "../../src/proxy/upstream-fetch.ts";

export interface NodeUpstreamFetchOptions {
  /** Idle keep-alive connections are closed after this many ms. Default 10000. */
  keepAliveTimeoutMs?: number;
}

type Method = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

function toRequestBody(body: RequestInit["body"]): string | Uint8Array | Readable | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  if (body instanceof ReadableStream) return Readable.fromWeb(body as import("node:stream/web").ReadableStream);
  throw new TypeError("unsupported upstream request body");
}

/**
 * A pull-based Web stream over a Node stream: one chunk per pull, so the upstream socket is
 * read only as fast as the client takes the answer. (Node 20's `Readable.toWeb` keeps pushing
 * after a cancel and throws "Controller is already closed".)
 */
function toWebStream(body: Readable & { dump(): Promise<void> }): ReadableStream<Uint8Array> {
  // The iterator reports errors to the reader; this keeps an error between reads from
  // becoming an uncaught 'error' event.
  body.on("error", () => {});
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel() {
        // Drains a small rest (the connection stays reusable) or closes it; never throws.
        return body.dump().catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}

/** Creates the Node upstream fetch (one connection pool per gateway). */
export function createNodeUpstreamFetch(options: NodeUpstreamFetchOptions = {}): UpstreamFetch {
  const dispatcher = new Agent({ keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000 });
  return async (url, init) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const method = (init.method ?? "GET").toUpperCase() as Method;
    // undici takes an EventEmitter as its abort signal: much cheaper than an AbortController.
    const abort = new EventEmitter();
    let timedOut = false;
    const armed = armHeaderTimeout(init.body, init.timeoutMs, () => {
      timedOut = true;
      abort.emit("abort");
    });
    let answer: Awaited<ReturnType<typeof request>>;
    try {
      answer = await request(url, { method, headers, body: toRequestBody(armed.body), signal: abort, dispatcher });
    } catch (error) {
      if (timedOut) throw new UpstreamTimeoutError("no response in time", { cause: error });
      throw error;
    } finally {
      armed.disarm();
    }
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (Array.isArray(value)) for (const item of value) responseHeaders.append(name, item);
      else if (value !== undefined) responseHeaders.append(name, value);
    }
    const status = answer.statusCode;
    if (method === "HEAD" || status === 204 || status === 304) {
      answer.body.dump().catch(() => {});
      return new Response(null, { status, headers: responseHeaders });
    }
    return new Response(toWebStream(answer.body), { status, headers: responseHeaders });
  };
}
