/**
 * Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection and never travel on, whether
 * the gateway proxies an answer or relays a recorded webhook. Headers named in `Connection` are
 * hop-by-hop too.
 */

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "trailers",
  "transfer-encoding",
  "upgrade",
]);

const isListedHopByHop = (name: string) => HOP_BY_HOP.has(name);

/** A predicate for the hop-by-hop headers of one message, given its `Connection` value. */
export function hopByHopFilter(connection: string | null | undefined): (name: string) => boolean {
  if (!connection || connection === "keep-alive" || connection === "close") return isListedHopByHop;
  const named = new Set(
    (connection ?? "")
      .split(",")
      .map((token) => token.trim().toLowerCase())
      .filter(Boolean),
  );
  return (name) => HOP_BY_HOP.has(name) || named.has(name);
}
