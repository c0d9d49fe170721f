/**
 * Metric names of the API proxy. Labels carry upstream ids, status codes and outcomes only:
 * never tokens, keys, paths or bodies.
 */
export const PROXY_METRICS = {
  gateway_proxy_requests_total: {
    type: "counter",
    help: "Proxy calls answered, by upstream and status (upstream answers and gateway errors).",
  },
  gateway_proxy_upstream_seconds: {
    type: "histogram",
    help: "Time from sending a proxied call upstream to its response headers, retries included.",
  },
  gateway_proxy_retries_total: { type: "counter", help: "Proxied calls sent again, by upstream and reason." },
  gateway_proxy_token_requests_total: {
    type: "counter",
    help: "Requests made to an upstream's token endpoint, by upstream and outcome.",
  },
} as const;
