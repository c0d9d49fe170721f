/**
 * A small history router: every view and its state live in the URL under `/console` (a deep
 * link names the view, its filters and the selected event), and the gateway answers the app for
 * every such path (src/console/console-routes.ts).
 */
import { useEffect, useState } from "preact/hooks";

export const BASE = "/console";

export type ViewName = "overview" | "live" | "search" | "event" | "destinations" | "send";

export interface Route {
  view: ViewName;
  /** The event id of `/console/events/{id}`. */
  id?: string;
  query: URLSearchParams;
}

const VIEWS: Record<string, ViewName> = {
  "": "overview",
  live: "live",
  search: "search",
  destinations: "destinations",
  send: "send",
};

/** Parses the current location into a route. */
export function parseRoute(location: { pathname: string; search: string }): Route {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : "";
  const parts = rest.split("/").filter(Boolean);
  const query = new URLSearchParams(location.search);
  if (parts[0] === "events" && parts[1]) return { view: "event", id: decodeURIComponent(parts[1]), query };
  return { view: VIEWS[parts[0] ?? ""] ?? "overview", query };
}

/** The console URL of a view with query parameters (empty values left out). */
export function hrefOf(path: string, query: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value) search.set(name, value);
  const text = search.toString();
  return `${BASE}${path}${text ? `?${text}` : ""}`;
}

/** Goes to `href` inside the app (push, or replace for state changes such as filters). */
export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** The current route, updated on navigation. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location));
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
  }, []);
  return route;
}

/** Click handler for in-app links: plain clicks navigate without a reload. */
export function onLinkClick(event: MouseEvent): void {
  const anchor = event.currentTarget as HTMLAnchorElement;
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  navigate(anchor.getAttribute("href") ?? BASE);
}
