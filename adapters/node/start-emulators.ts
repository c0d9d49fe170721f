/**
 * Serving the emulators on Node (`gateway emulate`, the zero-config `npm start`, and the tests):
 * every emulator of emulators/registry.ts on one port, each under `/{name}` (its API at
 * `{url}/{name}/api/public/v1`), with h3's Node server. Control calls (`/{name}/_emulator/*`)
 * need a sandbox credential as bearer token (docs/behind-a-load-balancer.md, "The sandbox"). Simulated activity runs on timers here
 * (`autoRun`), scaled by `timeScale`.
 */
import type { Server } from "node:http";
import { H3, serve } from "h3";
import { type EmulatorSetup, emulatorRegistry, type ServiceEmulator } from "../../emulators/registry.ts";

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

const isControlPath = (path: string, emulator: ServiceEmulator) =>
  path === emulator.controlPath || path.startsWith(`${emulator.controlPath}/`);

/** Does the request carry one of the emulator's sandbox secrets as its bearer token? */
function hasControlCredential(request: Request, emulator: ServiceEmulator): boolean {
  const token = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
  return token !== undefined && emulator.controlCredentials().includes(token);
}

export interface EmulatorsOptions {
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Multiplier of simulated delays. Default 1. */
  timeScale?: number;
  /** The emulators to start, by service name, with their webhook secrets. Default: every one. */
  only?: Readonly<Record<string, Pick<EmulatorSetup, "webhookSecret">>>;
}

/** One emulator being served. */
export interface ServedEmulator {
  name: string;
  emulator: ServiceEmulator;
  /** `{url}/{name}/api/public/v1` */
  apiUrl: string;
  /** `{url}/{name}/_emulator` */
  controlUrl: string;
}

export interface RunningEmulators {
  url: string;
  served: ServedEmulator[];
  close(): Promise<void>;
}

/** Starts the emulators `only` names (default every registered one) on one port. */
export async function startEmulators(options: EmulatorsOptions = {}): Promise<RunningEmulators> {
  const chosen = [...emulatorRegistry].filter(([name]) => !options.only || name in options.only);
  const emulators = chosen.map(([name, entry]) => ({
    name,
    emulator: entry.create({
      ...options.only?.[name],
      autoRun: true,
      timeScale: options.timeScale,
      mountPath: `/${name}`,
    }),
  }));
  const root = new H3();
  root.use((event) => {
    const path = event.url.pathname;
    const target = emulators.find(({ name }) => path === `/${name}` || path.startsWith(`/${name}/`));
    if (target && isControlPath(path, target.emulator) && !hasControlCredential(event.req, target.emulator)) {
      return new Response(
        JSON.stringify({
          error: { code: "unauthorized", message: "control calls need Authorization: Bearer <sandbox credential>" },
        }),
        { status: 401, headers: { "content-type": "application/json", "www-authenticate": 'Bearer realm="emulator"' } },
      );
    }
    if (target) return target.emulator.app.fetch(event.req);
    const names = emulators.map(({ name }) => `/${name}/…`).join(" or ");
    return new Response(JSON.stringify({ error: { code: "not_found", message: `try ${names}` } }), {
      status: 404,
      headers: { "content-type": "application/json" },
    });
  });
  let served: ServedApp;
  try {
    served = await serveApp(root, options.host, options.port);
  } catch (error) {
    for (const { emulator } of emulators) emulator.close();
    throw error;
  }
  return {
    url: served.url,
    served: emulators.map(({ name, emulator }) => ({
      name,
      emulator,
      apiUrl: `${served.url}${emulator.apiPath}`,
      controlUrl: `${served.url}${emulator.controlPath}`,
    })),
    async close() {
      for (const { emulator } of emulators) emulator.close();
      await served.close();
    },
  };
}
