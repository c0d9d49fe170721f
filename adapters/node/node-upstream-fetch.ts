/**
 * The API proxy's upstream `fetch` on Node: one undici `dispatch` per call on a keep-alive Agent,
 * with a handler of our own instead of `fetch` or `request` (no Fetch machinery, no Readable, no
 * AbortSignal per call). An answer that is complete when its first bytes are parsed (most API
 * answers: a few KB, with or without a declared length), or that declares at most 64 KiB, is
 * collected and handed on as one buffer that srvx writes with the head in one write. Anything
 * else streams with backpressure as a Node stream (`upstream-body-stream.ts`). The upstream's
 * header record is attached under `UPSTREAM_HEADER_RECORD`, so the proxy never builds a
 * `Headers` for it. The timeout covers the wait for the response headers once the body is sent
 * (`armHeaderTimeout`), and the body of a small declared answer.
 */
import { Readable } from "node:stream";
import { FastResponse } from "srvx";
import type { Agent } from "undici";
import {
  armHeaderTimeout,
  UPSTREAM_HEADER_RECORD,
  UPSTREAM_NATIVE_BODY,
  type UpstreamFetch,
  type UpstreamRequestInit,
  UpstreamTimeoutError,
} from "../../src/proxy/upstream-fetch.ts";
import { decodeBody, decoderFor } from "./decode-upstream-body.ts";
import { UpstreamBodyStream } from "./upstream-body-stream.ts";

export interface NodeUpstreamFetchOptions {
  /** Idle keep-alive connections are closed after this many ms. Default 10000. */
  keepAliveTimeoutMs?: number;
}

/** Answers that declare at most this many bytes are read whole before they are handed on. */
const BUFFERED_BODY_MAX_BYTES = 64 * 1024;

type NodeRequestBody = string | Uint8Array | Readable | null;
type HeaderRecord = Record<string, string | string[]>;

function toRequestBody(body: RequestInit["body"] | Readable): NodeRequestBody {
  if (body === undefined || body === null) return null;
  if (typeof body === "string" || body instanceof Uint8Array || body instanceof Readable) return body;
  if (body instanceof ReadableStream) return Readable.fromWeb(body as import("node:stream/web").ReadableStream);
  throw new TypeError("unsupported upstream request body");
}

/**
 * `armHeaderTimeout` for a Node stream body (a client's upload passed on as it is): the timeout
 * starts once the body has been read to its end, so a long upload is never cut off by it.
 */
function armAfterNodeBody(body: Readable, ms: number, onTimeout: () => void) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let disarmed = false;
  const arm = () => {
    if (!disarmed) timer = setTimeout(onTimeout, ms);
  };
  body.once("end", arm);
  return {
    body,
    disarm() {
      disarmed = true;
      body.off("end", arm);
      clearTimeout(timer);
    },
  };
}

/** undici's raw header pairs as a record: lower-case names, repeats joined (`set-cookie` kept apart). */
function toHeaderRecord(raw: Buffer[]): HeaderRecord {
  const headers: HeaderRecord = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as Buffer).toString("latin1").toLowerCase();
    const value = (raw[i + 1] as Buffer).toString("latin1");
    const earlier = headers[name];
    if (earlier === undefined) headers[name] = value;
    else if (name === "set-cookie") headers[name] = Array.isArray(earlier) ? [...earlier, value] : [earlier, value];
    else headers[name] = `${earlier}, ${value}`;
  }
  return headers;
}

/** The request headers as the record undici takes, without copying a record given as one. */
function toRequestHeaders(init: HeadersInit | undefined): Record<string, string> {
  if (init && !(init instanceof Headers) && !Array.isArray(init)) return init as Record<string, string>;
  const headers: Record<string, string> = {};
  new Headers(init).forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

function respond(status: number, statusText: string, headers: HeaderRecord, body: Uint8Array | Readable | null) {
  const init = { status, statusText, headers: headers as HeadersInit };
  const response =
    body instanceof Readable
      ? new StreamedUpstreamResponse(body, init)
      : new FastResponse(body as BodyInit | null, init);
  const tagged = response as Response & { [UPSTREAM_NATIVE_BODY]?: unknown; [UPSTREAM_HEADER_RECORD]?: HeaderRecord };
  if (body) tagged[UPSTREAM_NATIVE_BODY] = body;
  tagged[UPSTREAM_HEADER_RECORD] = headers;
  return response;
}

/**
 * srvx's lazy Response around a streamed answer: srvx pipes the Node stream to the client as is;
 * `body`, for the core's own reads and cancels, is a pull-based Web stream over it.
 */
class StreamedUpstreamResponse extends FastResponse {
  readonly #stream: Readable;
  #web: ReadableStream<Uint8Array<ArrayBuffer>> | undefined;
  constructor(stream: Readable, init: ResponseInit) {
    super(stream as unknown as BodyInit, init);
    this.#stream = stream;
  }
  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> {
    this.#web ??= toWebStream(this.#stream);
    return this.#web;
  }
}

/** A pull-based Web stream over a Node stream: the upstream is read only as fast as it is taken. */
function toWebStream(stream: Readable): ReadableStream<Uint8Array<ArrayBuffer>> {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Uint8Array<ArrayBuffer>>;
  return new ReadableStream<Uint8Array<ArrayBuffer>>(
    {
      async pull(controller) {
        const { done, value } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel() {
        stream.destroy();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * undici's (legacy, callback) dispatch handler of one call: resolves with the Response once the
 * body is known to be whole (collected) or once it is known to need streaming.
 */
class UpstreamCallHandler {
  #abort: ((reason?: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  #status = 0;
  #statusText = "";
  #headers: HeaderRecord = {};
  #chunks: Buffer[] = [];
  #size = 0;
  #complete = false;
  #settled = false;
  #stream: UpstreamBodyStream | undefined;
  /** Called once the call settles (answer handed on, or failed): the timeout stops there. */
  onSettled: (() => void) | undefined;

  constructor(
    private readonly method: string,
    private readonly resolve: (response: Response) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  /** Aborts the call (timeout); the error reaches `onError`. */
  abort(reason: Error): void {
    this.#abort?.(reason);
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort;
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void, statusText: string): boolean {
    if (status < 200) return true;
    this.#status = status;
    this.#statusText = statusText;
    this.#headers = toHeaderRecord(raw);
    this.#resume = resume;
    if (this.method === "HEAD" || status === 204 || status === 304) {
      this.#settle(null);
      return true;
    }
    const declared = Number(this.#headers["content-length"] ?? Number.NaN);
    // A small declared body is read whole (still within the timeout); otherwise the rest of the
    // bytes parsed from this read decide: complete at the end of it means one buffer.
    if (!(declared <= BUFFERED_BODY_MAX_BYTES)) {
      queueMicrotask(() => {
        if (!this.#settled) this.#startStreaming();
      });
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#stream) return this.#stream.push(chunk);
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    if (this.#size > BUFFERED_BODY_MAX_BYTES) this.#startStreaming();
    return true;
  }

  onComplete(): void {
    this.#complete = true;
    if (this.#stream) {
      this.#stream.push(null);
      return;
    }
    if (this.#settled) return;
    const body =
      this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks as Uint8Array[], this.#size);
    this.#chunks = [];
    this.#settle(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
  }

  onError(error: Error): void {
    if (this.#stream) {
      this.#stream.destroy(error);
      return;
    }
    if (!this.#settled) {
      this.#settled = true;
      this.onSettled?.();
      this.reject(error);
    }
  }

  #startStreaming(): void {
    const stream = new UpstreamBodyStream({
      resume: () => this.#resume?.(),
      abort: (reason) => {
        if (!this.#complete) this.#abort?.(reason);
      },
    });
    for (const chunk of this.#chunks) stream.push(chunk);
    this.#chunks = [];
    this.#stream = stream;
    this.#settle(stream);
  }

  #settle(body: Uint8Array | Readable | null): void {
    if (this.#settled) return;
    this.#settled = true;
    this.onSettled?.();
    // A compressed answer (asked for identity, compressed anyway) is handed on decoded.
    const decoder = body ? decoderFor(this.#headers["content-encoding"]) : undefined;
    const decoded = body && decoder ? decodeBody(body, decoder) : body;
    this.resolve(respond(this.#status, this.#statusText, this.#headers, decoded));
  }
}

/**
 * Creates the Node upstream fetch (one connection pool per gateway). undici (several MB of heap)
 * is loaded on the first call, so a gateway that proxies nothing never holds it.
 */
export function createNodeUpstreamFetch(options: NodeUpstreamFetchOptions = {}): UpstreamFetch {
  let dispatcher: Agent | undefined;
  let loading: Promise<Agent> | undefined;
  const loadDispatcher = () => {
    loading ??= import("undici").then(({ Agent }) => {
      dispatcher = new Agent({ keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000 });
      return dispatcher;
    });
    loading.catch(() => {
      loading = undefined;
    });
    return loading;
  };
  return (url: string, init: UpstreamRequestInit) =>
    new Promise<Response>((resolve, reject) => {
      const method = (init.method ?? "GET").toUpperCase();
      let timedOut = false;
      const handler = new UpstreamCallHandler(method, resolve, (error) =>
        reject(timedOut ? new UpstreamTimeoutError("no response in time", { cause: error }) : error),
      );
      const onTimeout = () => {
        timedOut = true;
        handler.abort(new UpstreamTimeoutError("no response in time"));
      };
      const armed =
        init.body instanceof Readable
          ? armAfterNodeBody(init.body, init.timeoutMs, onTimeout)
          : armHeaderTimeout(init.body, init.timeoutMs, onTimeout);
      handler.onSettled = () => armed.disarm();
      // The origin ends at the first "/" after "//"; the rest is the path and query.
      const pathStart = url.indexOf("/", url.indexOf("//") + 2);
      const dispatch = (agent: Agent) => {
        try {
          agent.dispatch(
            {
              origin: pathStart < 0 ? url : url.slice(0, pathStart),
              path: pathStart < 0 ? "/" : url.slice(pathStart),
              method,
              headers: toRequestHeaders(init.headers),
              body: toRequestBody(armed.body),
            },
            handler,
          );
        } catch (error) {
          armed.disarm();
          reject(error);
        }
      };
      if (dispatcher) dispatch(dispatcher);
      else
        loadDispatcher().then(dispatch, (error) => {
          armed.disarm();
          reject(error);
        });
    });
}
