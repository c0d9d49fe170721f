/**
 * `POST /auth/stream-token` and SSE refusals against a real gateway process: an API-key client
 * mints a short-lived HS256 token restricted to filters within its scope; the token works on
 * `/ws` and `/stream` with exactly that restriction; everything else is refused in the error
 * envelope.
 */
import { EventSource } from "eventsource";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { expectErrorEnvelope } from "../helpers/signed-requests.ts";
import { FrameLog, openReadyWs, type StreamGateway, startStreamGateway, syncClients } from "./stream-fixtures.ts";

let gw: StreamGateway;
beforeAll(async () => {
  gw = await startStreamGateway();
});
afterAll(() => gw?.kill());

function mint(key: string | undefined, body: unknown) {
  return fetch(`${gw.url}/auth/stream-token`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
}

describe("POST /auth/stream-token", () => {
  test("mints a short-lived token carrying the requested filters, usable on /ws with that restriction", async () => {
    const response = await mint(gw.keys.agreements, { type: ["agreement.declined"], ttlSeconds: 120 });
    expect(response.status).toBe(201);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = await response.json();
    expect(body).toMatchObject({ tokenType: "Bearer", expiresIn: 120, stream: { types: ["agreement.declined"] } });
    const claims = decodeJwt(body.token);
    expect(claims).toMatchObject({
      sub: "agreements",
      stream: { types: ["agreement.declined"] },
      proxy: [],
      events: false,
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(120);

    const browser = await openReadyWs(gw.wsUrl({ token: body.token }));
    const watcher = await openReadyWs(gw.wsUrl({ token: gw.keys.ui }));
    const declined = await gw.postEsign("agreement.declined");
    await gw.postEsign("agreement.signed");
    const marker = await gw.postEsign("agreement.sent");
    await watcher.log.waitFor((f) => f.event?.id === marker, "marker");
    await syncClients(browser);
    expect(browser.log.eventIds()).toEqual([declined]);
    browser.ws.terminate();
    watcher.ws.terminate();
  });

  test("the default lifetime applies when none is asked for", async () => {
    const body = await (await mint(gw.keys.ui, {})).json();
    expect(body.expiresIn).toBe(300);
  });

  test("filters outside the client's scope are refused with 403", async () => {
    const error = await expectErrorEnvelope(await mint(gw.keys.agreements, { source: "staffing" }), 403, "forbidden");
    expect(error.details.outsideScope).toEqual([{ dimension: "source", pattern: "staffing" }]);
    await expectErrorEnvelope(await mint(gw.keys.noStream, {}), 403, "forbidden");
  });

  test("only API-key clients mint; missing or JWT credentials are refused", async () => {
    await expectErrorEnvelope(await mint(undefined, {}), 401, "unauthorized");
    await expectErrorEnvelope(await mint("wrong-key", {}), 401, "unauthorized");
    await expectErrorEnvelope(await mint(await gw.signToken("ui", 60), {}), 403, "forbidden");
  });

  test("invalid requests are refused with 400", async () => {
    await expectErrorEnvelope(await mint(gw.keys.ui, { ttlSeconds: 999_999 }), 400, "invalid_request");
    await expectErrorEnvelope(await mint(gw.keys.ui, { types: ["agreement.*"] }), 400, "invalid_request");
    await expectErrorEnvelope(await mint(gw.keys.ui, { type: [""] }), 400, "invalid_request");
    const notJson = await fetch(`${gw.url}/auth/stream-token`, {
      method: "POST",
      headers: { authorization: `Bearer ${gw.keys.ui}` },
      body: "{",
    });
    await expectErrorEnvelope(notJson, 400, "invalid_request");
  });
});

describe("GET /stream refusals", () => {
  const open = (query: string, headers: Record<string, string> = {}) => fetch(`${gw.url}/stream${query}`, { headers });

  test("missing or invalid credentials: 401; expired token: 401 with the reason", async () => {
    await expectErrorEnvelope(await open(""), 401, "unauthorized");
    await expectErrorEnvelope(await open("", { authorization: "Bearer nope" }), 401, "unauthorized");
    const expired = await expectErrorEnvelope(
      await open(`?token=${await gw.signToken("ui", -5)}`),
      401,
      "unauthorized",
    );
    expect(expired.details).toEqual({ reason: "token_expired" });
  });

  test("out of scope: 403; unknown destination: 404; bad parameters: 400", async () => {
    await expectErrorEnvelope(await open(`?token=${gw.keys.noStream}`), 403, "forbidden");
    await expectErrorEnvelope(await open(`?token=${gw.keys.agreements}&source=staffing`), 403, "forbidden");
    await expectErrorEnvelope(await open(`?token=${gw.keys.ui}&destination=nowhere`), 404, "not_found");
    await expectErrorEnvelope(await open(`?token=${gw.keys.ui}&since=x`), 400, "invalid_request");
    await expectErrorEnvelope(await open(`?token=${gw.keys.ui}`, { "last-event-id": "x" }), 400, "invalid_request");
  });
});

describe("GET /stream", () => {
  test("filters apply and the Authorization header works (EventSource with a custom fetch)", async () => {
    const log = new FrameLog();
    const es = new EventSource(`${gw.url}/stream?type=agreement.declined&type=candidate.*`, {
      fetch: (input, init) =>
        fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${gw.keys.ui}` } }),
    });
    es.onmessage = (message) => log.push(JSON.parse(message.data));
    await log.waitFor((f) => f.type === "ready", "ready");
    expect(log.frames[0]?.subscriptions).toEqual({ default: { type: ["agreement.declined", "candidate.*"] } });
    await gw.postEsign("agreement.signed");
    const declined = await gw.postEsign("agreement.declined");
    const candidate = await gw.postStaffing("candidate.accepted");
    await log.waitForEvents(2);
    es.close();
    expect(log.eventIds()).toEqual([declined, candidate]);
  });

  test("CORS: the client's allowed origins may read the stream, others get no CORS grant", async () => {
    const allowed = await fetch(`${gw.url}/stream?token=${gw.keys.ui}`, {
      headers: { origin: "http://app.example.test" },
    });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("http://app.example.test");
    await allowed.body?.cancel();
    const other = await fetch(`${gw.url}/stream?token=${gw.keys.ui}`, { headers: { origin: "http://evil.test" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    await other.body?.cancel();
  });
});
