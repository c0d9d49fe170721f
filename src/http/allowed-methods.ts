/**
 * The methods a known path answers, for `405 Method Not Allowed` with `Allow` (RFC 9110
 * §15.5.6): the app's routes compiled once into patterns (`:param` one segment, `**` the rest).
 */

/** A registered route (route-recording-app.ts): a method (empty for any) and a pattern. */
export interface RouteEntry {
  method?: string;
  route: string;
}

/** Answers the methods of a path (`["GET", "HEAD"]`), empty when no route has the path. */
export type AllowedMethods = (path: string) => string[];

function compilePattern(route: string): RegExp {
  const source = route
    .split("/")
    .map((segment) => {
      if (segment === "**") return ".*";
      if (segment.startsWith(":") || segment === "*") return "[^/]+";
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${source}/?$`);
}

/** Builds the lookup from the routes with a method (catch-alls are left out). */
export function createAllowedMethods(routes: () => readonly RouteEntry[]): AllowedMethods {
  let compiled: { pattern: RegExp; method: string }[] | undefined;
  return (path) => {
    compiled ??= routes()
      .filter((r): r is Required<RouteEntry> => Boolean(r.method))
      .map((r) => ({ pattern: compilePattern(r.route), method: r.method.toUpperCase() }));
    const methods = new Set<string>();
    for (const { pattern, method } of compiled) {
      if (!pattern.test(path)) continue;
      methods.add(method);
      if (method === "GET") methods.add("HEAD");
    }
    return [...methods];
  };
}
