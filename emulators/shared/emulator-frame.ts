/**
 * The h3 app both emulators are built on: routes under `{mountPath}/api/public/v1` (the API) and
 * `{mountPath}/_emulator` (control and inspection), every API request logged and possibly
 * answered by an injected fault first, `EmulatorAnswer`s thrown by handlers turned into their
 * response, unknown routes answered 404 `not_found` and anything unexpected 500 in the envelope.
 */
import { H3, type H3Event } from "h3";
import { EmulatorAnswer, errorAnswer } from "./http-answers.ts";
import { createRequestLog, type Fault, type RequestLog } from "./request-log.ts";

const API_ROOT = "/api/public/v1";

export interface EmulatorFrameOptions {
  /** Prefix of every route, e.g. `/esign` when two emulators share a port. Default "". */
  mountPath?: string;
  /** The reference's code for a server error (`server_error` or `internal_error`). */
  serverErrorCode: string;
}

export interface EmulatorFrame {
  app: H3;
  /** Route prefix of the API (`{mountPath}/api/public/v1`). */
  api: string;
  /** Route prefix of the control calls (`{mountPath}/_emulator`). */
  control: string;
  log: RequestLog;
  /** Ends requests held by a `hang` fault. */
  close(): void;
}

type Handler = (event: H3Event) => Response | Promise<Response>;

/** Wraps a handler so that a thrown `EmulatorAnswer` becomes its response. */
export function answer(handler: Handler): Handler {
  return async (event) => {
    try {
      return await handler(event);
    } catch (error) {
      if (error instanceof EmulatorAnswer) return error.response;
      throw error;
    }
  };
}

/** The route parameter `name` ("" when absent). */
export function param(event: H3Event, name: string): string {
  return event.context.params?.[name] ?? "";
}

/** Drops the connection under a request where the runtime exposes it (Node); false elsewhere. */
function destroyConnection(event: H3Event): boolean {
  const node = (event.req as { runtime?: { node?: { req?: { socket?: { destroy(): void } } } } }).runtime?.node;
  const socket = node?.req?.socket;
  if (!socket) return false;
  socket.destroy();
  return true;
}

/** Creates the frame; the emulator adds its routes to `app`. */
export function createEmulatorFrame(options: EmulatorFrameOptions): EmulatorFrame {
  const mount = (options.mountPath ?? "").replace(/\/$/, "");
  const api = `${mount}${API_ROOT}`;
  const log = createRequestLog();
  const hung = new Set<() => void>();

  const app = new H3({
    onError(error) {
      const inner = (error as { cause?: unknown }).cause;
      if (inner instanceof EmulatorAnswer) return inner.response;
      const status = (error as { status?: number }).status ?? 500;
      if (status === 404) return errorAnswer(404, "not_found", "no such endpoint");
      if (status === 405) return errorAnswer(405, "not_found", "method not allowed on this endpoint");
      return errorAnswer(500, options.serverErrorCode, "unexpected emulator error");
    },
  });

  const applyFault = async (event: H3Event, fault: Fault): Promise<Response | undefined> => {
    if ("destroy" in fault) {
      if (destroyConnection(event)) return new Response(null, { status: 500 });
      return errorAnswer(500, options.serverErrorCode, "connection drop injected (not supported here)");
    }
    if ("hang" in fault) {
      await new Promise<void>((resolve) => hung.add(resolve));
      destroyConnection(event);
      return errorAnswer(503, options.serverErrorCode, "emulator closed");
    }
    await event.req.body?.cancel().catch(() => {});
    const body = fault.body ?? { error: { code: options.serverErrorCode, message: "injected fault" } };
    const headers = new Headers(fault.headers);
    headers.set("content-type", "application/json");
    return new Response(JSON.stringify(body), { status: fault.status, headers });
  };

  app.use(async (event, next) => {
    const { pathname, search } = event.url;
    if (pathname !== api && !pathname.startsWith(`${api}/`)) return next();
    const relative = pathname.slice(api.length) || "/";
    const fault = log.record(event.req.method, relative, search, event.req.headers);
    if (fault) return applyFault(event, fault);
    return next();
  });

  return {
    app,
    api,
    control: `${mount}/_emulator`,
    log,
    close() {
      for (const release of hung) release();
      hung.clear();
    },
  };
}
