/** Route matching: sources, services, type patterns, field filters, and own-property paths only. */
import { describe, expect, it } from "vitest";
import type { GatewayEvent } from "../../src/events/envelope.ts";
import { compileRoutes, readPath, resolveDestinations } from "../../src/routes/match-routes.ts";

function event(type: string, service: "esign" | "staffing", data: unknown): GatewayEvent {
  return {
    specversion: "1.0",
    id: "evt_00000000000000000000000000000000",
    source: `/webhooks/${service}`,
    type,
    time: "2026-11-22T00:00:00.000Z",
    datacontenttype: "application/json",
    data,
    service,
    upstreamid: "u",
    upstreamidkind: "event_id",
    receivedtime: "2026-11-22T00:00:00.000Z",
  };
}

const routes = compileRoutes([
  {
    id: "completed",
    types: ["agreement.*"],
    where: { "data.status": ["completed", "declined"] },
    destinations: ["crm"],
  },
  {
    id: "review",
    services: ["staffing"],
    types: ["candidate.accepted"],
    where: { "data.result.requiresReview": true },
    destinations: ["mail", "crm"],
  },
  { id: "all-esign", sources: ["esign"], types: ["*"], destinations: ["live"] },
]);

describe("resolveDestinations", () => {
  it.each([
    ["esign", event("agreement.completed", "esign", { status: "completed" }), ["crm", "live"]],
    ["esign", event("agreement.sent", "esign", { status: "sent" }), ["live"]],
    ["esign-eu", event("agreement.declined", "esign", { status: "declined" }), ["crm"]],
    ["staffing", event("candidate.accepted", "staffing", { result: { requiresReview: true } }), ["mail", "crm"]],
    ["staffing", event("candidate.accepted", "staffing", { result: { requiresReview: false } }), []],
    ["staffing", event("candidate.accepted", "staffing", { result: { requiresReview: "true" } }), []],
  ])("source %s, %o", (sourceId, e, expected) => {
    expect(resolveDestinations(routes, sourceId as string, e as GatewayEvent)).toEqual(expected);
  });

  it("reads own properties only, never the prototype chain", () => {
    const e = event("agreement.sent", "esign", { status: "sent" });
    expect(readPath(e, "data.status")).toBe("sent");
    expect(readPath(e, "data.constructor")).toBeUndefined();
    expect(readPath(e, "data.__proto__")).toBeUndefined();
    expect(readPath(e, "data.toString")).toBeUndefined();
  });
});
