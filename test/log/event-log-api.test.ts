/**
 * The event log API against a real process: admin authentication, every filter of
 * `GET /events`, cursor pagination, query validation, and `GET /events/{id}` (envelope, raw
 * body, redacted headers, state, marks).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import {
  adminGet,
  esignDelivery,
  expectErrorEnvelope,
  listAllEventIds,
  postWebhook,
  readAnswer,
  type SignedDelivery,
  staffingDelivery,
} from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "../ingress/gateway-fixtures.ts";

interface Seeded {
  name: string;
  id: string;
  delivery: SignedDelivery;
}

let gw: GatewayProcess;
/** Seeded events in delivery order (oldest first). */
const seeded: Seeded[] = [];
const byName = (name: string) => seeded.find((s) => s.name === name)!.id;
/** Ids of `names`, newest first (the order of the log). */
const newestFirst = (...names: string[]) =>
  seeded
    .filter((s) => names.includes(s.name))
    .map((s) => s.id)
    .reverse();

const externalId = (value: string) => (body: Record<string, unknown>) => {
  body.external_id = value;
  (body.data as Record<string, unknown>).external_id = value;
};

beforeAll(async () => {
  gw = await startEditedGatewayProcess(() => {});
  const { esign, staffing } = gw.secrets;
  const plan: [string, string, Promise<SignedDelivery>][] = [
    ["e1", "esign", esignDelivery(esign, "agreement.sent", { subjectId: "ag-1", edit: externalId("crm-1") })],
    ["s1", "staffing", staffingDelivery(staffing, "candidate.accepted", { subjectId: "sr-1" })],
    ["e2", "esign", esignDelivery(esign, "agreement.signed", { subjectId: "ag-1", edit: externalId("crm-1") })],
    ["e3", "esign", esignDelivery(esign, "agreement.completed", { subjectId: "ag-2", edit: externalId("crm-2") })],
    ["s2", "staffing", staffingDelivery(staffing, "staffing.completed", { subjectId: "sr-1" })],
    ["e4", "esign", esignDelivery(esign, "participant.notifications_changed", { subjectId: "ag-2" })],
    [
      "s3",
      "staffing",
      staffingDelivery(staffing, "candidate.responded", {
        subjectId: "sr-2",
        edit: (body) => {
          body.externalId = "shift-2";
        },
      }),
    ],
    ["e5", "esign", esignDelivery(esign, "agreement.teleported", { subjectId: "ag-3" })],
    [
      "e6",
      "esign",
      esignDelivery(esign, "agreement.viewed", {
        subjectId: "ag-3",
        edit: (body) => {
          body.brand_new_field = { added: "by the upstream" };
        },
      }),
    ],
  ];
  // One at a time, so that the log order is the plan's order.
  for (const [name, source, pending] of plan) {
    const delivery = await pending;
    const answer = await readAnswer(await postWebhook(gw.url, source, delivery));
    expect(answer.status).toBe(202);
    seeded.push({ name, id: answer.body.id, delivery });
  }
});
afterAll(async () => {
  await gw.kill();
});

const list = async (query: string) => {
  const { status, body } = await adminGet(gw.url, `/events?${query}`, gw.secrets.adminKey);
  expect(status).toBe(200);
  return (body.events as { id: string }[]).map((e) => e.id);
};

describe("admin authentication", () => {
  for (const path of ["/events", "/events/evt_00000000000000000000000000000000"]) {
    it(`refuses ${path} without the right key and serves it with it`, async () => {
      for (const authorization of [undefined, "Bearer wrong-key", `Basic ${gw.secrets.adminKey}`, "Bearer "]) {
        const response = await fetch(`${gw.url}${path}`, { headers: authorization ? { authorization } : {} });
        const wwwAuthenticate = response.headers.get("www-authenticate");
        await expectErrorEnvelope(response, 401, "unauthorized");
        expect(wwwAuthenticate).toMatch(/^Bearer/);
      }
      const ok = await fetch(`${gw.url}${path === "/events" ? path : `/events/${seeded[0]!.id}`}`, {
        headers: { authorization: `Bearer ${gw.secrets.adminKey}` },
      });
      expect(ok.status).toBe(200);
    });
  }
});

describe("GET /events filters", () => {
  it("lists everything newest first without filters", async () => {
    expect(await list("")).toEqual(seeded.map((s) => s.id).reverse());
  });

  it("filters by source", async () => {
    expect(await list("source=esign")).toEqual(newestFirst("e1", "e2", "e3", "e4", "e5", "e6"));
    expect(await list("source=staffing")).toEqual(newestFirst("s1", "s2", "s3"));
    expect(await list("source=nope")).toEqual([]);
  });

  it("filters by type pattern: glob, * and exact", async () => {
    expect(await list("type=agreement.*")).toEqual(newestFirst("e1", "e2", "e3", "e5", "e6"));
    expect(await list("type=candidate.*")).toEqual(newestFirst("s1", "s3"));
    expect(await list("type=*")).toEqual(seeded.map((s) => s.id).reverse());
    expect(await list("type=candidate.accepted")).toEqual(newestFirst("s1"));
    expect(await list("type=*.completed")).toEqual(newestFirst("e3", "s2"));
    expect(await list("type=agreement")).toEqual([]);
  });

  it("filters by subject and external id", async () => {
    expect(await list("subject=agreements/ag-1")).toEqual(newestFirst("e1", "e2"));
    expect(await list("subject=staffing-requests/sr-1")).toEqual(newestFirst("s1", "s2"));
    expect(await list("external_id=crm-2")).toEqual(newestFirst("e3"));
    expect(await list("external_id=crm-1")).toEqual(newestFirst("e1", "e2"));
    expect(await list("external_id=shift-2")).toEqual(newestFirst("s3"));
  });

  it("combines filters", async () => {
    expect(await list("source=esign&type=agreement.*&subject=agreements/ag-2")).toEqual(newestFirst("e3"));
    expect(await list("source=staffing&type=agreement.*")).toEqual([]);
  });

  it("filters by receive time: from inclusive, to exclusive, RFC 3339 or epoch ms", async () => {
    const { body } = await adminGet(gw.url, "/events?limit=500", gw.secrets.adminKey);
    const times = new Map<string, number>(
      body.events.map((e: { id: string; event: { receivedtime: string } }) => [e.id, Date.parse(e.event.receivedtime)]),
    );
    const pivot = times.get(byName("e3"))!;
    const expected = (keep: (t: number) => boolean) => [...times].filter(([, t]) => keep(t)).map(([id]) => id);
    expect(await list(`from=${pivot}`)).toEqual(expected((t) => t >= pivot));
    expect(await list(`from=${new Date(pivot).toISOString()}`)).toEqual(expected((t) => t >= pivot));
    expect(await list(`to=${pivot}`)).toEqual(expected((t) => t < pivot));
    expect(await list(`to=${encodeURIComponent(new Date(pivot).toISOString())}`)).toEqual(expected((t) => t < pivot));
    expect(await list(`from=${pivot}&to=${pivot + 1}`)).toEqual(expected((t) => t === pivot));
    expect(await list(`from=${pivot}&to=${pivot + 1}`)).toContain(byName("e3"));
    expect(await list(`to=${times.get(byName("e1"))}`)).toEqual([]);
  });
});

describe("GET /events pagination", () => {
  it("walks every event exactly once, newest first, ending with next_cursor null", async () => {
    for (const limit of [1, 2, 3, 4, 9, 10]) {
      const pages: string[][] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 20; i++) {
        const query: string = `limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`;
        const { body } = await adminGet(gw.url, `/events?${query}`, gw.secrets.adminKey);
        pages.push(body.events.map((e: { id: string }) => e.id));
        expect(body.events.length).toBeLessThanOrEqual(limit);
        cursor = body.next_cursor;
        if (cursor === null) break;
        expect(cursor).toMatch(/^\d+$/);
      }
      expect(cursor).toBeNull();
      expect(pages.flat()).toEqual(seeded.map((s) => s.id).reverse());
      expect(pages).toHaveLength(Math.ceil(seeded.length / limit));
    }
  });

  it("paginates a filtered listing", async () => {
    expect(await listAllEventIds(gw.url, gw.secrets.adminKey, "type=agreement.*", 2)).toEqual(
      newestFirst("e1", "e2", "e3", "e5", "e6"),
    );
  });

  it("orders pages by strictly decreasing seq", async () => {
    const { body } = await adminGet(gw.url, "/events?limit=500", gw.secrets.adminKey);
    const seqs = body.events.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});

describe("GET /events query validation", () => {
  const cases: [string, string][] = [
    ["limit=0", "limit"],
    ["limit=501", "limit"],
    ["limit=ten", "limit"],
    ["from=yesterday", "from"],
    ["to=2026-13-45", "to"],
    ["cursor=abc", "cursor"],
    ["cursor=-1", "cursor"],
    ["type=Agreement%20Sent!", "type"],
    [`subject=${"s".repeat(301)}`, "subject"],
    ["colour=blue", "colour"],
  ];
  for (const [query, field] of cases) {
    it(`answers 400 invalid_request naming "${field}" for ${query.slice(0, 40)}`, async () => {
      const response = await fetch(`${gw.url}/events?${query}`, {
        headers: { authorization: `Bearer ${gw.secrets.adminKey}` },
      });
      const error = await expectErrorEnvelope(response, 400, "invalid_request");
      expect(error.details.map((d: { field: string }) => d.field)).toContain(field);
    });
  }
});

describe("GET /events/{id}", () => {
  it("shows the envelope, the raw body, redacted headers and the state", async () => {
    const e3 = seeded.find((s) => s.name === "e3")!;
    const response = await fetch(`${gw.url}/events/${e3.id}`, {
      headers: { authorization: `Bearer ${gw.secrets.adminKey}` },
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    const body = JSON.parse(text);
    const sent = JSON.parse(new TextDecoder().decode(e3.delivery.body));
    expect(body.event).toMatchObject({
      specversion: "1.0",
      id: e3.id,
      source: "/webhooks/esign",
      type: "agreement.completed",
      subject: "agreements/ag-2",
      datacontenttype: "application/json",
      data: sent,
      service: "esign",
      upstreamid: sent.event_id,
      upstreamidkind: "event_id",
    });
    expect(body).toMatchObject({ id: e3.id, state: "recorded", source_id: "esign", marks: [] });
    expect(Date.parse(body.received_at)).not.toBeNaN();
    expect(Buffer.from(body.raw_body_base64, "base64").equals(Buffer.from(e3.delivery.body))).toBe(true);
    expect(body.headers["x-svc-signature"]).toBe("[redacted]");
    expect(body.headers["x-svc-event"]).toBe("agreement.completed");
    expect(body.headers["content-type"]).toBe("application/json");
    // The signature value appears nowhere in the answer.
    const signature = e3.delivery.headers["x-svc-signature"]!;
    expect(text).not.toContain(signature.slice("sha256=".length));
  });

  it("redacts the staffing signature but keeps the delivery id and timestamp", async () => {
    const s1 = seeded.find((s) => s.name === "s1")!;
    const { body } = await adminGet(gw.url, `/events/${s1.id}`, gw.secrets.adminKey);
    expect(body.headers["x-svc-signature"]).toBe("[redacted]");
    expect(body.headers["x-svc-delivery-id"]).toBe(s1.delivery.headers["x-svc-delivery-id"]);
    expect(body.headers["x-svc-timestamp"]).toBe(s1.delivery.headers["x-svc-timestamp"]);
    expect(body.event).toMatchObject({ upstreamidkind: "delivery-id", subject: "staffing-requests/sr-1" });
  });

  it("shows the marks of accepted-but-marked bodies", async () => {
    const unknownType = await adminGet(gw.url, `/events/${byName("e5")}`, gw.secrets.adminKey);
    expect(unknownType.body.marks).toContain("unknown_type");
    expect(unknownType.body.event.type).toBe("agreement.teleported");
    const extra = await adminGet(gw.url, `/events/${byName("e6")}`, gw.secrets.adminKey);
    expect(extra.body.marks).toEqual(["extra_fields"]);
    expect(extra.body.event.data.brand_new_field).toEqual({ added: "by the upstream" });
    // Marks show in the listing too.
    const { body } = await adminGet(gw.url, "/events?limit=500", gw.secrets.adminKey);
    const marksOf = (id: string) => body.events.find((e: { id: string }) => e.id === id).marks;
    expect(marksOf(byName("e5"))).toContain("unknown_type");
    expect(marksOf(byName("e6"))).toEqual(["extra_fields"]);
    expect(marksOf(byName("e1"))).toEqual([]);
  });

  it("answers 404 not_found for unknown and malformed ids", async () => {
    for (const id of ["evt_00000000000000000000000000000000", "not-an-id", `${byName("e1")}0`]) {
      const response = await fetch(`${gw.url}/events/${id}`, {
        headers: { authorization: `Bearer ${gw.secrets.adminKey}` },
      });
      await expectErrorEnvelope(response, 404, "not_found");
    }
  });
});
