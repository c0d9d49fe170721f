/**
 * Serving the emulators on Node (`gateway emulate`, the zero-config `npm start`, and the tests):
 * both emulators on one port under `/esign` and `/staffing` (each API at
 * `{url}/{service}/api/public/v1`), or one emulator alone at the root, with h3's Node server.
 * Simulated activity runs on timers here (`autoRun`), scaled by `timeScale`.
 */
import type { Server } from "node:http";
import { H3, serve } from "h3";
import {
  createEsignEmulator,
  type EsignEmulator,
  type EsignEmulatorOptions,
} from "../../emulators/esign/esign-emulator.ts";
import {
  createStaffingEmulator,
  type StaffingEmulator,
  type StaffingEmulatorOptions,
} from "../../emulators/staffing/staffing-emulator.ts";

export interface ServedApp {
  url: string;
  close(): Promise<void>;
}

/** Serves an h3 app on `host:port` (port 0 picks a free one). */
export async function serveApp(app: H3, host = "127.0.0.1", port = 0): Promise<ServedApp> {
  const server = serve(app, { hostname: host, port, silent: true, gracefulShutdown: false });
  await server.ready();
  const node = server.node?.server as Server | undefined;
  const address = node?.address();
  const bound = address && typeof address === "object" ? address.port : Number(new URL(server.url ?? "").port);
  node?.setMaxListeners(0);
  if (node) node.keepAliveTimeout = 60_000;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}`,
    async close() {
      node?.closeAllConnections();
      await server.close(true);
    },
  };
}

export interface EmulatorsOptions {
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Multiplier of simulated delays. Default 1. */
  timeScale?: number;
  esign?: EsignEmulatorOptions | false;
  staffing?: StaffingEmulatorOptions | false;
}

export interface RunningEmulators {
  url: string;
  esign?: EsignEmulator;
  staffing?: StaffingEmulator;
  /** `{url}/esign/api/public/v1` */
  esignBaseUrl?: string;
  /** `{url}/staffing/api/public/v1` */
  staffingBaseUrl?: string;
  close(): Promise<void>;
}

/** Starts the emulators that are not switched off (`false`) on one port. */
export async function startEmulators(options: EmulatorsOptions = {}): Promise<RunningEmulators> {
  const common = { autoRun: true, timeScale: options.timeScale };
  const esign =
    options.esign === false ? undefined : createEsignEmulator({ ...common, ...options.esign, mountPath: "/esign" });
  const staffing =
    options.staffing === false
      ? undefined
      : createStaffingEmulator({ ...common, ...options.staffing, mountPath: "/staffing" });
  const root = new H3();
  root.use((event) => {
    const path = event.url.pathname;
    if (esign && (path === "/esign" || path.startsWith("/esign/"))) return esign.app.fetch(event.req);
    if (staffing && (path === "/staffing" || path.startsWith("/staffing/"))) return staffing.app.fetch(event.req);
    return new Response(JSON.stringify({ error: { code: "not_found", message: "try /esign/… or /staffing/…" } }), {
      status: 404,
      headers: { "content-type": "application/json" },
    });
  });
  const served = await serveApp(root, options.host, options.port);
  return {
    url: served.url,
    esign,
    staffing,
    esignBaseUrl: esign ? `${served.url}${esign.apiPath}` : undefined,
    staffingBaseUrl: staffing ? `${served.url}${staffing.apiPath}` : undefined,
    async close() {
      esign?.close();
      staffing?.close();
      await served.close();
    },
  };
}
