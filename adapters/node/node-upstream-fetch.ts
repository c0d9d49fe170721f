/**
 * The API proxy's upstream `fetch` on Node: undici's `request` on one keep-alive Agent, wrapped
 * into the `fetch` shape the core uses. Node's built-in `fetch` implements the whole Fetch
 * standard per call and costs two to three times as much CPU per proxied request; the proxy
 * needs none of that (no redirects followed, no CORS, no cache). Bodies stream both ways with
 * backpressure; a streamed request body keeps its declared `Content-Length`. The timeout covers
 * the wait for the response headers once the body is sent (`armHeaderTimeout`), and for an
 * answer small enough to be read whole (<= 64 KiB declared), the wait for its body too. The
 * answer's body reaches the client's socket without Web streams (`UPSTREAM_NATIVE_BODY`).
 */
import { EventEmitter } from "node:events";
import { Readable } from "node:stream";
import { FastResponse } from "srvx";
import { Agent, request } from "undici";
import {
  armHeaderTimeout,
  UPSTREAM_NATIVE_BODY,
  type UpstreamFetch,
  UpstreamTimeoutError,
} from "../../src/proxy/upstream-fetch.ts";

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
function toWebStream(body: NodeBody): ReadableStream<Uint8Array<ArrayBuffer>> {
  // The iterator reports errors to the reader; this keeps an error between reads from
  // becoming an uncaught 'error' event.
  body.on("error", () => {});
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array<ArrayBuffer>>;
  return new ReadableStream<Uint8Array<ArrayBuffer>>(
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

type NodeBody = Readable & { dump(): Promise<void> };

/** Answers that declare at most this many bytes are buffered and sent on in one write. */
const BUFFERED_BODY_MAX_BYTES = 64 * 1024;

/** Attaches the body srvx writes as is (`UPSTREAM_NATIVE_BODY`) to a Response built around it. */
function withNativeBody(response: Response, body: Uint8Array<ArrayBuffer>): Response {
  (response as Response & { [UPSTREAM_NATIVE_BODY]?: Uint8Array })[UPSTREAM_NATIVE_BODY] = body;
  return response;
}

/**
 * The upstream's answer: srvx's lazy Response (status and headers without building a Fetch
 * Response; `json()` and friends build one on demand) carrying undici's Node stream as the
 * native body, which srvx pipes to the client socket as is (`UPSTREAM_NATIVE_BODY`). `body`, for
 * the core's own reads and cancels, is the pull-based Web stream over the same Node stream.
 */
class NodeUpstreamResponse extends FastResponse {
  readonly [UPSTREAM_NATIVE_BODY]: NodeBody;
  #web: ReadableStream<Uint8Array<ArrayBuffer>> | undefined;
  constructor(body: NodeBody, init: ResponseInit) {
    super(body as unknown as BodyInit, init);
    // A client gone mid-answer destroys the stream, which undici reports as an 'error' event
    // (RequestAbortedError); the pipe's owner handles it, this keeps it from being uncaught.
    body.on("error", () => {});
    this[UPSTREAM_NATIVE_BODY] = body;
  }
  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> {
    this.#web ??= toWebStream(this[UPSTREAM_NATIVE_BODY]);
    return this.#web;
  }
}

/** undici's header record as `HeadersInit`, each value of a repeated header its own entry. */
function toHeadersInit(headers: Record<string, string | string[] | undefined>): HeadersInit {
  let pairs: [string, string][] | undefined;
  for (const name in headers) {
    if (Array.isArray(headers[name])) {
      pairs = [];
      break;
    }
  }
  if (!pairs) return headers as Record<string, string>;
  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value)) for (const item of value) pairs.push([name, item]);
    else if (value !== undefined) pairs.push([name, value]);
  }
  return pairs;
}

/** The request headers as the record undici takes, without copying a record given as one. */
function toHeaderRecord(init: HeadersInit | undefined): Record<string, string> {
  if (init && !(init instanceof Headers) && !Array.isArray(init)) return init as Record<string, string>;
  const headers: Record<string, string> = {};
  const source = init instanceof Headers ? init : new Headers(init);
  source.forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

/** Creates the Node upstream fetch (one connection pool per gateway). */
export function createNodeUpstreamFetch(options: NodeUpstreamFetchOptions = {}): UpstreamFetch {
  const dispatcher = new Agent({ keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000 });
  return async (url, init) => {
    const headers = toHeaderRecord(init.headers);
    const method = (init.method ?? "GET").toUpperCase() as Method;
    // undici takes an EventEmitter as its abort signal: much cheaper than an AbortController.
    const abort = new EventEmitter();
    let timedOut = false;
    const armed = armHeaderTimeout(init.body, init.timeoutMs, () => {
      timedOut = true;
      abort.emit("abort");
    });
    let answer: Awaited<ReturnType<typeof request>>;
    let small: Uint8Array<ArrayBuffer> | undefined;
    try {
      answer = await request(url, { method, headers, body: toRequestBody(armed.body), signal: abort, dispatcher });
      const bodyless = method === "HEAD" || answer.statusCode === 204 || answer.statusCode === 304;
      // A small declared body is read whole (still within the timeout) and sent on as one
      // buffer: one socket write, no stream pipeline per call (most API answers are a few KB).
      if (!bodyless && Number(answer.headers["content-length"] ?? Number.NaN) <= BUFFERED_BODY_MAX_BYTES) {
        small = new Uint8Array(await answer.body.arrayBuffer());
      }
    } catch (error) {
      if (timedOut) throw new UpstreamTimeoutError("no response in time", { cause: error });
      throw error;
    } finally {
      armed.disarm();
    }
    const responseHeaders = toHeadersInit(answer.headers);
    const status = answer.statusCode;
    if (method === "HEAD" || status === 204 || status === 304) {
      answer.body.dump().catch(() => {});
      return new FastResponse(null, { status, headers: responseHeaders });
    }
    if (small) return withNativeBody(new FastResponse(small, { status, headers: responseHeaders }), small);
    return new NodeUpstreamResponse(answer.body, { status, headers: responseHeaders });
  };
}
