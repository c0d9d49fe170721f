/**
 * Serves the web console (docs/console.md): `GET /console` and every deep link under it
 * answer the single-page app's HTML; `GET /console/assets/{file}` answers the content-hashed
 * script and stylesheet from `console-assets.generated.ts` (built by `npm run build:console`,
 * strings in a module, so Node and Workers serve it without a filesystem). In the zero-config
 * development setup `GET /console/dev-key` offers the generated admin key to the page. The page
 * is told which optional routes this gateway answers (`<meta name="gateway-features">`), so it
 * never asks for one that would 404 (a failed request is an error in the browser's console).
 */
import type { H3 } from "h3";
import { createGatewayError } from "../errors.ts";
import { CONSOLE_ASSETS, CONSOLE_HTML } from "./console-assets.generated.ts";
import { consoleHeaders } from "./console-headers.ts";

export interface ConsoleOptions {
  /**
   * The development admin key, set only by the Node CLI when it generated the development
   * secrets itself and listens on a loopback address (adapters/node/serve-command.ts). Default: none,
   * and `GET /console/dev-key` answers 404.
   */
  devAdminKey?: string;
}

/** Optional routes the console may use; each `false` means the route answers 404. */
export interface ConsoleFeatures {
  /** `GET /test-events` and `POST /sources/{id}/test-events` (config `testEvents`, or development). */
  testEvents: boolean;
  /** `POST /auth/stream-token` (config `auth.jwt.hs256Secret`). */
  streamTokens: boolean;
}

// Only a page the developer opened on this machine may read the dev key: the Host must name a
// loopback address (a DNS-rebinding page carries its own host name) and the browser must not
// report a cross-site request.
const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;

function isOwnLoopbackPage(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  return LOOPBACK_HOST.test(request.headers.get("host") ?? "") && (site === null || site === "same-origin");
}

/** The app's HTML with the features this gateway offers to the page at `request`'s host. */
function htmlWithFeatures(request: Request, options: ConsoleOptions, features: ConsoleFeatures): string {
  const names = [
    features.testEvents ? "test-events" : "",
    features.streamTokens ? "stream-tokens" : "",
    options.devAdminKey && LOOPBACK_HOST.test(request.headers.get("host") ?? "") ? "dev-key" : "",
  ].filter(Boolean);
  return CONSOLE_HTML.replace("</head>", `<meta name="gateway-features" content="${names.join(" ")}">\n</head>`);
}

/** Adds the console routes to `app`. */
export function registerConsoleRoutes(
  app: H3,
  options: ConsoleOptions = {},
  features: ConsoleFeatures = { testEvents: false, streamTokens: false },
): void {
  const html = (request: Request) =>
    new Response(htmlWithFeatures(request, options, features), {
      headers: consoleHeaders(request.headers.get("host"), "text/html; charset=utf-8", "no-cache"),
    });

  app.get("/console/assets/:file", (event) => {
    const asset = CONSOLE_ASSETS[event.context.params?.file ?? ""];
    if (!asset) throw createGatewayError(404, "not_found", "no such console asset");
    return new Response(asset.body, {
      headers: consoleHeaders(event.req.headers.get("host"), asset.type, "public, max-age=31536000, immutable"),
    });
  });

  app.get("/console/dev-key", (event) => {
    if (!options.devAdminKey || !isOwnLoopbackPage(event.req)) {
      throw createGatewayError(404, "not_found", "no development key is offered by this gateway");
    }
    return new Response(JSON.stringify({ key: options.devAdminKey, development: true }), {
      headers: consoleHeaders(event.req.headers.get("host"), "application/json; charset=utf-8", "no-store"),
    });
  });

  app.get("/console", (event) => html(event.req));
  app.get("/console/**", (event) => html(event.req));
}
