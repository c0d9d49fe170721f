/**
 * The one thing webhook ingress asks of request headers: a case-insensitive `get` that answers
 * like a Fetch `Headers` (repeated headers joined by ", ", null when absent). A `Headers` is one;
 * the Node fast path (adapters/node/webhook-fast-path.ts) reads Node's own header list instead of
 * building a `Headers` per request.
 */
export interface HeaderReader {
  get(name: string): string | null;
}
