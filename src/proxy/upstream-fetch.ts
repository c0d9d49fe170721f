/**
 * One HTTP exchange with an upstream, bounded by a timeout on the response headers, and the
 * failures the proxy tells apart: the timeout (504), a network error (502, retryable for safe
 * calls), a retryable status, and the caller going away.
 */

/** A proxied call: `fetch`'s init plus the wait allowed for the response headers. */
export interface UpstreamRequestInit extends RequestInit {
  /** `"half"` marks a streamed request body. */
  duplex?: "half";
  /** Milliseconds until the response headers; then reject with `UpstreamTimeoutError`. */
  timeoutMs: number;
}

/**
 * The proxy's HTTP client: `fetch` semantics without following redirects, rejecting with
 * `UpstreamTimeoutError` when the headers are late and with any other error when the upstream
 * cannot be reached. Runtime adapters may supply a faster one (adapters/node/node-upstream-fetch.ts).
 */
export type UpstreamFetch = (url: string, init: UpstreamRequestInit) => Promise<Response>;

/** No response headers within the upstream's timeout. */
export class UpstreamTimeoutError extends Error {
  override readonly name = "UpstreamTimeoutError";
}

/** Connection refused, reset or closed before a response. */
export class UpstreamNetworkError extends Error {
  override readonly name = "UpstreamNetworkError";
}

/** A 429/502/503/504 answer that may be retried; `retryAfterMs` from `Retry-After`. */
export class RetryableStatusError extends Error {
  override readonly name = "RetryableStatusError";
  constructor(
    readonly status: number,
    readonly retryAfterMs: number | undefined,
  ) {
    super(`upstream answered ${status}`);
  }
}

/**
 * Where a runtime's `UpstreamFetch` may attach the response body in the form its own server
 * writes without Web-stream piping (the Node adapter: undici's Node stream, which srvx pipes
 * straight into the socket). The proxy passes it to h3 unchanged; `response.body` stays usable
 * for everything else (cancel on retry, `json()` of token answers) and is used when absent.
 */
export const UPSTREAM_NATIVE_BODY: unique symbol = Symbol.for("gateway.upstream-native-body");

/**
 * Where a runtime's `UpstreamFetch` may attach the answer's headers as the record it parsed them
 * into (lower-case names, repeats joined, `set-cookie` as a list), so the proxy reads them
 * without building a `Headers`; `response.headers` is used when absent.
 */
export const UPSTREAM_HEADER_RECORD: unique symbol = Symbol.for("gateway.upstream-header-record");

/** The answer's headers: the runtime's record when attached, else `response.headers`. */
export function upstreamHeadersOf(response: Response): Headers | Readonly<Record<string, string | string[]>> {
  return (
    (response as { [UPSTREAM_HEADER_RECORD]?: Record<string, string | string[]> })[UPSTREAM_HEADER_RECORD] ??
    response.headers
  );
}

/** The body to send on to the client: the runtime's native one when attached, else `response.body`. */
export function passOnBody(response: Response): BodyInit | null {
  // Typed as BodyInit for h3's HTTPResponse, which hands any body to the runtime's server as is.
  const native = (response as { [UPSTREAM_NATIVE_BODY]?: BodyInit })[UPSTREAM_NATIVE_BODY];
  return native ?? response.body;
}

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The header timeout of one call: `onTimeout` fires `ms` after the request body has been handed
 * over completely (at once for a call without a streamed body), so a 20 MB upload on a slow link
 * is not cut off while it is still being sent. Returns the body to send and the disarm function.
 */
export function armHeaderTimeout(
  body: RequestInit["body"],
  ms: number,
  onTimeout: () => void,
): { body: RequestInit["body"]; disarm(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let disarmed = false;
  const arm = () => {
    if (!disarmed) timer = setTimeout(onTimeout, ms);
  };
  const disarm = () => {
    disarmed = true;
    clearTimeout(timer);
  };
  if (!(body instanceof ReadableStream)) {
    arm();
    return { body, disarm };
  }
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  const watched = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        controller.close();
        arm();
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return { body: watched, disarm };
}

/**
 * The default upstream client: the runtime's `fetch`, with a timeout on the wait for the
 * response headers (see `armHeaderTimeout`); once they arrive the body may stream for as long as
 * it takes. Runtime adapters may supply a faster `UpstreamFetch`.
 */
export const fetchUpstream: UpstreamFetch = async (url, init) => {
  const { timeoutMs, ...rest } = init;
  const timeout = new AbortController();
  const armed = armHeaderTimeout(rest.body, timeoutMs, () =>
    timeout.abort(new UpstreamTimeoutError("no response in time")),
  );
  try {
    return await fetch(url, { ...rest, body: armed.body, redirect: "manual", signal: timeout.signal });
  } catch (error) {
    if (timeout.signal.aborted) throw new UpstreamTimeoutError("no response in time", { cause: error });
    throw error;
  } finally {
    armed.disarm();
  }
};

/** One exchange through `fetcher`; failures become `UpstreamTimeoutError` or `UpstreamNetworkError`. */
export async function callUpstream(
  fetcher: UpstreamFetch,
  url: string,
  init: Omit<UpstreamRequestInit, "timeoutMs">,
  timeoutMs: number,
): Promise<Response> {
  try {
    return await fetcher(url, { ...init, timeoutMs });
  } catch (error) {
    if (error instanceof UpstreamTimeoutError) throw error;
    throw new UpstreamNetworkError("upstream unreachable", { cause: error });
  }
}
