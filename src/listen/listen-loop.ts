/**
 * The heart of `gateway listen`, runtime-agnostic: connect to the gateway's `/ws` with the saved
 * cursor, take event frames one at a time, hand each to `handle` (which resolves once the local
 * app accepted it), and only then save the frame's cursor. So events reach the app at least once
 * and in event log order, and a listener that was stopped, slept or lost its gateway resumes where
 * the app last said 2xx (docs/live-stream.md, Cursors and resume). Heartbeats advance the
 * cursor only when nothing is pending. The runtime supplies the socket and the cursor storage.
 */
import { type ListenedEvent, type ListenFrame, parseListenFrame } from "./listen-frames.ts";

/** The part of a WebSocket the loop uses (the `ws` package and the Web `WebSocket` both fit). */
export interface ListenSocket {
  addEventListener(type: "open" | "error", listener: () => void): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
  close(code?: number, reason?: string): void;
}

export interface ListenLoopOptions {
  /** Base URL of the gateway (`http(s)://host[:port]`). */
  gatewayUrl: string;
  /** Stream filters (`source`, `type`; repeatable) and a content filter as JSON text (docs/filters.md). */
  filters: { source?: readonly string[]; type?: readonly string[]; filter?: string };
  openSocket(url: string): ListenSocket;
  /** The saved cursor, if any. */
  loadCursor(): string | undefined;
  /** Saves the cursor durably (undefined: start from the newest event next time). */
  saveCursor(cursor: string | undefined): Promise<void>;
  /**
   * Delivers one event; resolves once the local app accepted it, optionally with a report to
   * run once the cursor past it is saved (the printed line then means "done for good").
   */
  handle(event: ListenedEvent): Promise<(() => void) | undefined>;
  /** Status lines for the user (connections, warnings). */
  notice(line: string): void;
  signal: AbortSignal;
  /** Reconnect backoff bounds, ms. Defaults 500 and 10000. */
  minReconnectMs?: number;
  maxReconnectMs?: number;
  /** Frames held while the app is slow before the listener lets go and resumes later. Default 1000. */
  maxQueuedFrames?: number;
}

/** Close codes after which reconnecting cannot help (docs/live-stream.md, close code table). */
const FATAL_CLOSE = new Set([4000, 4001, 4003, 4004]);

export class ListenRefusedError extends Error {
  override readonly name = "ListenRefusedError";
}

/** The `/ws` URL for `since`. */
export function streamUrlOf(options: Pick<ListenLoopOptions, "gatewayUrl" | "filters">, since?: string): string {
  const url = new URL("/ws", options.gatewayUrl);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  for (const source of options.filters.source ?? []) url.searchParams.append("source", source);
  for (const type of options.filters.type ?? []) url.searchParams.append("type", type);
  if (options.filters.filter !== undefined) url.searchParams.set("filter", options.filters.filter);
  if (since !== undefined) url.searchParams.set("since", since);
  return url.toString();
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Runs until `signal` aborts; rejects with ListenRefusedError when the gateway refuses for good. */
export async function runListenLoop(options: ListenLoopOptions): Promise<void> {
  let cursor = options.loadCursor();
  let failures = 0;
  while (!options.signal.aborted) {
    const end = await connectOnce(options, cursor, (next) => {
      cursor = next;
    });
    if (options.signal.aborted) return;
    if (FATAL_CLOSE.has(end.code)) throw new ListenRefusedError(`the gateway refused the listener: ${end.reason}`);
    if (end.code === 4010) {
      // The event log cannot serve our cursor (retention purged what followed, or another store).
      options.notice(`WARNING: ${end.reason}: events after cursor ${cursor} cannot be replayed; continuing live`);
      cursor = undefined;
      await options.saveCursor(undefined);
    }
    failures = end.ready ? 0 : failures + 1;
    const min = options.minReconnectMs ?? 500;
    const delay = Math.min(options.maxReconnectMs ?? 10_000, min * 2 ** Math.min(failures, 10));
    options.notice(`disconnected (${end.code}${end.reason ? ` ${end.reason}` : ""}); reconnecting in ${delay} ms`);
    await sleep(delay, options.signal);
  }
}

interface ConnectionEnd {
  code: number;
  reason: string;
  /** The gateway accepted the connection (a `ready` frame came). */
  ready: boolean;
}

/** One connection: resolves once it closed and every frame it brought was dealt with. */
function connectOnce(
  options: ListenLoopOptions,
  since: string | undefined,
  advance: (cursor: string | undefined) => void,
): Promise<ConnectionEnd> {
  const maxQueued = options.maxQueuedFrames ?? 1000;
  const socket = options.openSocket(streamUrlOf(options, since));
  const queue: ListenFrame[] = [];
  let working: Promise<void> | undefined;
  let dropping = false;
  let ready = false;
  let fatal: { code: string; message: string } | undefined;

  const save = async (cursor: string) => {
    await options.saveCursor(cursor);
    advance(cursor);
  };

  const process = async (frame: ListenFrame) => {
    if (frame.type === "event") {
      const report = await options.handle(frame.event);
      await save(frame.cursor);
      report?.();
    } else if (frame.type === "ready" && since === undefined) {
      // First run: remember where "now" was, so events recorded while we are away are kept.
      await save(frame.cursor);
    } else if (frame.type === "heartbeat" && frame.cursor !== since) {
      await save(frame.cursor);
    }
  };

  const pump = () => {
    if (working) return;
    working = (async () => {
      try {
        for (let frame = queue.shift(); frame && !options.signal.aborted; frame = queue.shift()) {
          await process(frame);
        }
      } catch (error) {
        if (options.signal.aborted) return;
        // Not delivered, cursor not moved: drop what is held and try again from the cursor.
        options.notice(`could not deliver: ${error instanceof Error ? error.message : String(error)}`);
        dropping = true;
        queue.length = 0;
        socket.close(1000, "listener retrying");
      }
    })().finally(() => {
      working = undefined;
      if (queue.length > 0 && !options.signal.aborted) pump();
    });
  };

  const onAbort = () => socket.close(1000, "listener stopping");
  options.signal.addEventListener("abort", onAbort, { once: true });

  socket.addEventListener("message", ({ data }) => {
    const frame = typeof data === "string" ? parseListenFrame(data) : undefined;
    if (!frame) return options.notice("ignored a frame the listener does not understand");
    if (frame.type === "ready") {
      ready = true;
      options.notice(`connected to ${options.gatewayUrl} (cursor ${frame.cursor})`);
    }
    if (frame.type === "error") {
      if (frame.fatal) fatal = { code: frame.code, message: frame.message };
      else options.notice(`gateway: ${frame.code}: ${frame.message}`);
      return;
    }
    if (dropping || (frame.type !== "event" && frame.type !== "heartbeat" && frame.type !== "ready")) return;
    if (queue.length >= maxQueued) {
      // The app is slower than the stream: let go of what is held and resume from the cursor
      // once the event being delivered is done, instead of holding an unbounded backlog.
      dropping = true;
      queue.length = 0;
      socket.close(1000, "listener catching up");
      return;
    }
    queue.push(frame);
    pump();
  });
  socket.addEventListener("error", () => {});

  return new Promise((resolve) => {
    socket.addEventListener("close", ({ code, reason }) => {
      options.signal.removeEventListener("abort", onAbort);
      const finish = () => resolve({ code, reason: fatal ? `${fatal.code}: ${fatal.message}` : reason, ready });
      const drain = async () => {
        while (working) await working;
      };
      drain().then(finish, finish);
    });
  });
}
