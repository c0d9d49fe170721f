/**
 * Runs autocannon in-process and reduces its result to the figures the benchmarks print.
 * Each request comes from `nextRequest`, called once per request.
 */
import autocannon from "autocannon";

export interface LoadRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadFigures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  total: number;
  non2xx: number;
  errors: number;
}

/** Fires requests from `nextRequest` at `url` with `connections` for `durationSeconds`. */
export async function runLoad(
  url: string,
  nextRequest: () => LoadRequest,
  options: { connections: number; durationSeconds: number; overallRate?: number },
): Promise<LoadFigures> {
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.durationSeconds,
    // A fixed offered load (requests/s over all connections) compares CPU per request at equal work.
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
    requests: [
      {
        setupRequest: (request) => {
          const item = nextRequest();
          return { ...request, method: item.method as "POST", path: item.path, headers: item.headers, body: item.body };
        },
      },
    ],
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
