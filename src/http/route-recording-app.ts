/**
 * An h3 app that keeps its own list of the routes registered on it (`get`, `post`, `all`, …
 * all register through the public `on`), so that the gateway can answer `405` with `Allow`
 * (allowed-methods.ts) without reading h3's private route table.
 */
import { H3 } from "h3";
import type { RouteEntry } from "./allowed-methods.ts";

/** A new app and the live list of the routes registered on it (method upper-cased, "" for any). */
export function createRouteRecordingApp(config?: ConstructorParameters<typeof H3>[0]): {
  app: H3;
  routes: readonly RouteEntry[];
} {
  const routes: RouteEntry[] = [];
  class RouteRecordingH3 extends H3 {
    override on(...args: Parameters<H3["on"]>): this {
      const [method, route] = args;
      routes.push({ method: (method || "").toUpperCase(), route });
      return super.on(...args);
    }
  }
  return { app: new RouteRecordingH3(config), routes };
}
