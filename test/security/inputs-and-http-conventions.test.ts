/**
 * Issue 18 rows 4, 5, 7, 9 and 10 against real processes: a known path with another method is
 * 405 with `Allow`; every answer carries `X-Request-Id`; a correctly signed body nested 10,000
 * deep is a permanent 400 `invalid_body` and `/healthz` stays 200; the proxy refuses NUL and
 * other control characters in any spelling; a client aborting mid-body is an `info` line; the
 * zero-config emulators bind loopback whatever `--host` says and their control calls need a
 * sandbox credential.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { type EsignServer, startEsignEmulator } from "../helpers/emulators.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { adminKeyHash, esignDelivery, signEsignBytes } from "../helpers/signed-requests.ts";
import { openStreamedRequest } from "../ingress/streamed-request.ts";
import { hashKey, newKey, proxyConfig, proxyEnv } from "../proxy/proxy-fixtures.ts";

const appKey = newKey("app");
let esign: EsignServer;
let gateway: GatewayProcess;

beforeAll(async () => {
  esign = await startEsignEmulator({ generalLimitPerClient: 100_000 });
  const secrets = makeSecrets();
  const options = {
    esign,
    clients: [{ id: "app", apiKeyHashes: [hashKey(appKey)], scopes: { proxy: [{ upstream: "esign" }] } }],
  };
  const base = defaultTestConfig("", adminKeyHash(secrets.adminKey)) as Record<string, unknown>;
  const proxy = proxyConfig(options);
  const config = {
    ...base,
    store: { driver: "memory" },
    upstreams: proxy.upstreams,
    clients: proxy.clients,
    log: { level: "info" },
  };
  gateway = await startGatewayProcess({ config, secrets, env: proxyEnv(options) });
});

afterAll(async () => {
  await gateway?.kill();
  await esign?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Sends a request byte for byte (fetch would normalise paths and refuse some methods). */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: Uint8Array): Promise<Answer> {
  const url = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers, agent: false }, (res) => {
      let text = "";
      res.on("data", (chunk) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("row 4: 405 with Allow on known paths", () => {
  test.each([
    ["GET", "/webhooks/esign", "POST"],
    ["PUT", "/events", "GET, HEAD"],
    ["DELETE", "/events/evt_1", "GET, HEAD"],
    ["POST", "/destinations", "GET, HEAD"],
    ["GET", "/destinations/x/pause", "POST"],
    ["GET", "/auth/stream-token", "POST"],
    ["POST", "/healthz", "GET, HEAD"],
    ["DELETE", "/metrics", "GET, HEAD"],
  ])("%s %s answers 405, Allow: %s", async (method, path, allow) => {
    const answer = await raw(method, path);
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe(allow);
    expect(JSON.parse(answer.body).error.code).toBe("method_not_allowed");
    expect(answer.headers["x-request-id"]).toBeTruthy();
  });

  test("an unknown path is still 404", async () => {
    const answer = await raw("GET", "/no/such/route");
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body).error.code).toBe("not_found");
  });
});

describe("row 5: X-Request-Id on every answer", () => {
  const auth = () => ({ authorization: `Bearer ${gateway.secrets.adminKey}` });
  test.each([
    ["GET", "/healthz", {}],
    ["GET", "/metrics", {}],
    ["GET", "/no/such/route", {}],
    ["PUT", "/events", {}],
    ["GET", "/events", "admin"],
    ["GET", "/events", {}],
    ["GET", "/destinations", "admin"],
    ["GET", "/console", {}],
    ["GET", "/api/esign/agreements", "app"],
    ["GET", "/api/esign/agreements/..%00", "app"],
    ["GET", "/api/nope/x", "app"],
    ["POST", "/webhooks/esign", {}],
  ] as const)("%s %s", async (method, path, who) => {
    const headers =
      who === "admin" ? auth() : who === "app" ? { authorization: `Bearer ${appKey}` } : ({} as Record<string, string>);
    const fresh = await raw(method, path, headers);
    expect(fresh.headers["x-request-id"], `${fresh.status}`).toMatch(/^\S{1,128}$/);
    const echoed = await raw(method, path, { ...headers, "x-request-id": "req-abc-123" });
    expect(echoed.headers["x-request-id"]).toBe("req-abc-123");
  });
});

describe("row 7: a nesting bomb", () => {
  test("a correctly signed body 10,000 levels deep is 400 invalid_body; /healthz stays 200", async () => {
    const depth = 10_000;
    const text = `{"event":"agreement.completed","event_id":"evt-deep-${Date.now()}","agreement_id":"ag-1","nested":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    const bytes = new TextEncoder().encode(text);
    for (let attempt = 0; attempt < 3; attempt++) {
      // The upstream retries: every retry gets the same permanent answer.
      const answer = await raw("POST", "/webhooks/esign", await signEsignBytes(gateway.secrets.esign, bytes), bytes);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error.code).toBe("invalid_body");
    }
    const health = await raw("GET", "/healthz");
    expect(health.status).toBe(200);
    const delivery = await esignDelivery(gateway.secrets.esign);
    expect((await raw("POST", "/webhooks/esign", delivery.headers, delivery.body)).status).toBe(202);
  });
});

describe("row 10: proxy refuses control characters in any spelling", () => {
  test.each([
    "/api/esign/agreements/..%00",
    "/api/esign/agreements/x%00y",
    "/api/esign/agreements/x%0ay",
    "/api/esign/agreements/x%0D%0Ay",
    "/api/esign/agreements/x%7f",
    "/api/esign/agreements/x%2500",
    "/api/esign/agreements?q=%00",
    "/api/esign/agreements?q=a%0d%0aX-Injected:%201",
  ])("%s answers 400 and never reaches the upstream", async (path) => {
    const before = esign.seen.length;
    const answer = await raw("GET", path, { authorization: `Bearer ${appKey}` });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.code).toBe("invalid_request");
    expect(esign.seen.length).toBe(before);
  });

  test("a raw control character in the request line is refused before the gateway", async () => {
    const before = esign.seen.length;
    const url = new URL(gateway.url);
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    socket.on("error", () => {});
    let data = "";
    socket.on("data", (chunk) => {
      data += chunk;
    });
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(
      `GET /api/esign/agreements/x\x01y HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${appKey}\r\n\r\n`,
    );
    await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    expect(data.startsWith("HTTP/1.1 400")).toBe(true);
    expect(esign.seen.length).toBe(before);
  });
});

describe("row 10: a client aborting mid-body", () => {
  test("is an info line, not an error", async () => {
    const request = openStreamedRequest(`${gateway.url}/webhooks/esign`, {
      "content-type": "application/json",
      "x-svc-signature": `sha256=${"0".repeat(64)}`,
      "content-length": "1000",
    });
    request.answer.catch(() => {});
    await request.write('{"event_id":');
    request.destroy();
    await waitFor("the abort's log line", () => gateway.lines.some((line) => line.includes("client aborted")));
    const line = JSON.parse(gateway.lines.find((l) => l.includes("client aborted")) as string);
    expect(line.level).toBe("info");
    expect(gateway.lines.filter((l) => l.includes('"level":"error"'))).toEqual([]);
  });
});

describe("row 9: the zero-config sandbox stays local", () => {
  const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
  let cwd: string;
  let child: ChildProcess;

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  test("serve --host 0.0.0.0: emulators on loopback; control calls need a sandbox credential", async () => {
    cwd = await mkdtemp(join(tmpdir(), "gw-sandbox-host-"));
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(ESIGN_|STAFFING_|GATEWAY_)/.test(name)),
    );
    child = spawn(process.execPath, [BIN, "serve", "--host", "0.0.0.0", "--port", "0"], {
      cwd,
      env: { ...env, HOME: cwd },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const emulatorsLine = await new Promise<string>((resolve, reject) => {
      const lines: string[] = [];
      for (const stream of [child.stdout, child.stderr]) {
        createInterface({ input: stream! }).on("line", (line) => {
          lines.push(line);
          if (line.includes('"msg":"emulators listening')) resolve(line);
        });
      }
      child.once("exit", (code) => reject(new Error(`gateway exited (${code}):\n${lines.join("\n")}`)));
    });
    const announced = JSON.parse(emulatorsLine) as { url: string; control: string[] };
    expect(new URL(announced.url).hostname).toBe("127.0.0.1");
    const staffingControl = announced.control.find((c) => c.endsWith("/staffing/_emulator")) as string;
    const secrets = JSON.parse(await readFile(join(cwd, ".data", "dev-secrets.json"), "utf8")) as Record<
      string,
      string
    >;

    const anonymous = await fetch(`${staffingControl}/requests`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const wrong = await fetch(`${staffingControl}/requests`, { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    const allowed = await fetch(`${staffingControl}/requests`, {
      headers: { authorization: `Bearer ${secrets.STAFFING_WEBHOOK_SECRET}` },
    });
    expect(allowed.status).toBe(200);
  }, 60_000);
});
