/**
 * Filter benchmark (docs/filters.md), two parts:
 *   - a compiled 5-clause filter on recorded events of both services: ns per event (target
 *     <= 2,000 ns), against an empty predicate measured in the same loop;
 *   - ingress to delivery with 50 filtered routes (49 that never match, each evaluated in full
 *     on e-sign events, plus one that matches everything) against 1 plain route, closed loop:
 *     delivered events/s and the gateway's CPU per delivered event (target: within 10 %), both
 *     gateways loaded at the same time so that the machine's other load falls on both alike,
 *     plus the routing step alone measured in process (CPU time).
 */
import { randomBytes } from "node:crypto";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import type { GatewayEvent } from "../../src/events/envelope.ts";
import { parseEventFilter } from "../../src/filters/event-filter.ts";
import { compileRoutes, resolveDestinations } from "../../src/routes/match-routes.ts";
import { buildEsignBody } from "../../src/services/esign/esign-samples.ts";
import { buildStaffingBody } from "../../src/services/staffing/staffing-samples.ts";
import { cpuSecondsOf } from "../lib/cpu-meter.ts";
import { createWebhookGenerator } from "../lib/signed-webhooks.ts";
import { awaitReceipts, drive, httpReceiver } from "./fanout.ts";
import { startBenchGateway } from "./ingress.ts";

/** Five clauses: a type prefix, a set, an object filter on an array, an existence, a time range. */
export const FIVE_CLAUSES = {
  type: { $startsWith: "agreement." },
  data: {
    status: { $in: ["signed", "completed"] },
    participants: { status: "signed", email: { $endsWith: "@example.com" } },
  },
  subject: { $exist: true },
  time: { $gte: "2026-01-01T00:00:00Z" },
};

function recordOf(service: string, type: string, data: unknown) {
  const event = {
    specversion: "1.0",
    id: "evt_0",
    source: `/webhooks/${service}`,
    type,
    subject: service === "esign" ? "agreements/agr-1" : undefined,
    time: "2026-11-25T12:00:00.000Z",
    datacontenttype: "application/json",
    data,
    service,
    upstreamid: "u",
    upstreamidkind: "event_id",
    receivedtime: "2026-11-25T12:00:00.000Z",
  } as GatewayEvent;
  return { event: JSON.parse(JSON.stringify(event)), headers: { "content-type": "application/json" } };
}

function nsPerCall(fn: (i: number) => boolean, iterations: number): number {
  let hits = 0;
  for (let i = 0; i < iterations / 10; i++) if (fn(i)) hits++;
  // CPU time of this process, not wall time: the figure should not count other processes' turns.
  const started = process.cpuUsage();
  for (let i = 0; i < iterations; i++) if (fn(i)) hits++;
  const used = process.cpuUsage(started);
  const ns = ((used.user + used.system) * 1000) / iterations;
  if (hits < 0) console.log(hits);
  return Math.round(ns * 10) / 10;
}

/** The compiled-filter micro benchmark. */
export function benchCompiledFilter(iterations = 2_000_000) {
  const parsed = parseEventFilter({ filter: FIVE_CLAUSES });
  if (!parsed.ok || !parsed.filter) throw new Error("bench filter invalid");
  const filter = parsed.filter;
  const esign = recordOf("esign", "agreement.completed", {
    ...buildEsignBody("agreement.completed", { uniqueId: "b1" }),
    status: "completed",
  });
  const staffing = recordOf(
    "staffing",
    "candidate.accepted",
    buildStaffingBody("candidate.accepted", { uniqueId: "b2" }),
  );
  if (!filter.matchesRecord(esign) || filter.matchesRecord(staffing)) throw new Error("bench filter semantics");
  const both = [esign, staffing];
  const empty = nsPerCall((i) => (both[i & 1] as typeof esign).event.type.length > 0, iterations);
  const matching = nsPerCall(() => filter.matchesRecord(esign), iterations);
  const mixed = nsPerCall((i) => filter.matchesRecord(both[i & 1] as typeof esign), iterations);
  return { empty_ns: empty, esign_matching_ns: matching, both_services_ns: mixed };
}

/** 49 routes whose 5 clauses are all evaluated on e-sign events and never match, plus one that matches all. */
function fiftyRoutes(never: string, target: string) {
  const routes: Record<string, unknown>[] = [];
  for (let i = 0; i < 49; i++) {
    routes.push({
      id: `never-${i}`,
      filter: {
        type: { $startsWith: "agreement." },
        subject: { $exist: true },
        time: { $gte: "2026-01-01T00:00:00Z" },
        data: {
          status: { $in: ["signed", "completed", "sent"] },
          participant: { email: { $endsWith: `@n${i}.test` } },
        },
      },
      destinations: [never],
    });
  }
  routes.push({
    id: "all",
    filter: { type: { $in: ["agreement.signed", "candidate.responded"] } },
    destinations: [target],
  });
  return routes;
}

type RouteSet = (never: string, target: string) => Record<string, unknown>[];

/** A gateway with a sink, a never-used destination and `routes`. */
async function startSide(routes: RouteSet) {
  const sink = await httpReceiver("sink");
  const never = await httpReceiver("never");
  const bench = await startBenchGateway({
    log: { level: "warn" },
    destinations: [sink.config, never.config],
    routes: routes(never.id, sink.id),
  });
  return {
    sink,
    never,
    bench,
    generate: createWebhookGenerator(bench.secrets, randomBytes(4).toString("hex")),
    async close() {
      await bench.cleanup();
      await sink.close();
      await never.close();
    },
  };
}

/**
 * Both gateways at once, each with 16 requests in flight for the same `seconds`: whatever else
 * the machine does falls on both alike. Events/s until each sink has every event, and each
 * gateway's CPU per event.
 */
async function deliveredSideBySide(a: RouteSet, b: RouteSet, seconds: number) {
  const sides = [await startSide(a), await startSide(b)];
  try {
    for (const side of sides) {
      const warm = await drive(side.bench.gateway.url, side.generate, { seconds: 2, concurrency: 8 });
      await awaitReceipts([side.sink], warm.accepted.keys());
    }
    const pids = sides.map((side) => side.bench.gateway.child.pid as number);
    const cpuBefore = await Promise.all(pids.map(cpuSecondsOf));
    const runs = await Promise.all(
      sides.map((side) => drive(side.bench.gateway.url, side.generate, { seconds, concurrency: 16 })),
    );
    return await Promise.all(
      sides.map(async (side, i) => {
        const run = runs[i] as (typeof runs)[number];
        const last = await awaitReceipts([side.sink], run.accepted.keys());
        const cpu = (await cpuSecondsOf(pids[i] as number)) - (cpuBefore[i] as number);
        if (side.never.receipts.size > 0) throw new Error("a never-matching route delivered");
        return {
          delivered: Math.round(run.accepted.size / ((last - run.started) / 1000)),
          cpuUsPerEvent: Math.round((cpu / run.accepted.size) * 1e6),
        };
      }),
    );
  } finally {
    for (const side of sides) await side.close();
  }
}

/** Routing cost in process: `resolveDestinations` over both services' events, 50 filtered routes vs 1. */
export function benchRouting(iterations = 500_000) {
  const compile = (routes: Record<string, unknown>[]) =>
    compileRoutes(
      resolveConfig(
        {
          sources: [{ id: "esign", service: "esign", secrets: ["s-0123456789abcdef"] }],
          destinations: [
            { id: "sink", type: "stream" },
            { id: "never", type: "stream" },
          ],
          routes,
        },
        {},
      ).routes,
    );
  const one = compile([{ destinations: ["sink"] }]);
  const fifty = compile(fiftyRoutes("never", "sink"));
  const esign = recordOf("esign", "agreement.signed", buildEsignBody("agreement.signed", { uniqueId: "r1" }));
  const staffing = recordOf(
    "staffing",
    "candidate.responded",
    buildStaffingBody("candidate.responded", { uniqueId: "r2" }),
  );
  const both = [esign, staffing];
  const run = (routes: typeof one) =>
    nsPerCall((i) => {
      const r = both[i & 1] as typeof esign;
      return resolveDestinations(routes, "esign", r.event, r.headers).length === 1;
    }, iterations);
  return { one_route_routing_ns: run(one), fifty_routes_routing_ns: run(fifty) };
}

/** Runs both parts. */
export async function benchFilters(options: { durationSeconds?: number } = {}) {
  const seconds = options.durationSeconds ?? 10;
  const micro = benchCompiledFilter();
  console.log(
    `compiled 5-clause filter: ${micro.esign_matching_ns} ns per matching e-sign event, ${micro.both_services_ns} ns ` +
      `alternating both services (empty predicate ${micro.empty_ns} ns; target <= 2000 ns)`,
  );
  const routing = benchRouting();
  console.log(
    `routing in process (resolveDestinations, both services): 1 route ${routing.one_route_routing_ns} ns, ` +
      `50 filtered routes ${routing.fifty_routes_routing_ns} ns per event`,
  );
  const oneRoute: RouteSet = (_never, target) => [{ destinations: [target] }];
  const [one, fifty] = (await deliveredSideBySide(oneRoute, fiftyRoutes, seconds)) as [
    { delivered: number; cpuUsPerEvent: number },
    { delivered: number; cpuUsPerEvent: number },
  ];
  const ratio = Math.round((fifty.delivered / one.delivered) * 100) / 100;
  const cpuRatio = Math.round((fifty.cpuUsPerEvent / one.cpuUsPerEvent) * 100) / 100;
  console.log(
    `ingress to delivery, side by side, 16 in flight each: 1 route ${one.delivered} events/s (${one.cpuUsPerEvent} µs gateway CPU per event); ` +
      `50 filtered routes ${fifty.delivered} events/s (${fifty.cpuUsPerEvent} µs); throughput ratio ${ratio}, ` +
      `CPU per event ratio ${cpuRatio} (target: within 10 %)`,
  );
  return {
    ...micro,
    ...routing,
    one_route_eps: one.delivered,
    fifty_routes_eps: fifty.delivered,
    throughput_ratio: ratio,
    one_route_cpu_us_per_event: one.cpuUsPerEvent,
    fifty_routes_cpu_us_per_event: fifty.cpuUsPerEvent,
    cpu_ratio: cpuRatio,
  };
}
