/**
 * The Node fast path's own part (adapters/node/webhook-fast-path.ts), on a real `node:http` server
 * whose one request handler stands for srvx/h3: which requests it takes, what it hands the ingress
 * (headers as a `Headers` answers, the peer address, the body under its cap) and what it writes;
 * the switch that turns it off. What the policy answers is src/ingress's (fast-path-parity.test.ts).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  installWebhookFastPath,
  readWebhookFastPathSetting,
  webhookFastPathEnabled,
} from "../../adapters/node/webhook-fast-path.ts";
import type { GatewayConfig } from "../../src/config/schema.ts";
import type { WebhookAnswer, WebhookInput } from "../../src/ingress/webhook-exchange.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;

import { createLogger } from "../../src/ops/logger.ts";

/** A server config without a trusted proxy: the client address is the peer's. */
const NO_PROXY = { trustProxy: false } as GatewayConfig["server"];
let server: Server;
let base: string;
const routedPaths: string[] = [];

async function receiveWebhook(sourceId: string, input: WebhookInput, path: string): Promise<WebhookAnswer> {
  const limit = Number(input.headers.get("x-limit") ?? 1 << 20);
  // As the ingress reads it: after its guards, by when a body sent with its head has arrived.
  if (input.headers.get("x-read-later") !== null) await new Promise((resolve) => setImmediate(resolve));
  const body = await input.readBody(limit, 5_000);
  return {
    status: body.ok ? 202 : 413,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": "fixed" },
    body: JSON.stringify({
      sourceId,
      path,
      text: body.ok ? new TextDecoder().decode(body.bytes) : body.reason,
      repeated: input.headers.get("X-Repeated"),
      absent: input.headers.get("x-absent"),
      address: input.clientAddress,
      listed: input.listHeaders(),
    }),
  };
}

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    routedPaths.push(`${req.method} ${req.url}`);
    res.writeHead(299, { "content-type": "text/plain" }).end("routed");
  });
  expect(installWebhookFastPath(server, { receiveWebhook }, createLogger("silent"), NO_PROXY)).toBe(true);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function send(path: string, method: string, headers: [string, string][], body?: string) {
  const url = new URL(path, base);
  return new Promise<{ status: number; headers: IncomingMessage["headers"]; text: string }>((resolve, reject) => {
    // A raw header list gets no Host from Node: HTTP/1.1 needs one.
    const flat: string[] = [["host", url.host] as [string, string], ...headers].flat();
    const req = request({ host: url.hostname, port: url.port, path, method, headers: flat, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("which requests it takes", () => {
  it("answers POST /webhooks/{id}, with or without a query string, and hands the path without it", async () => {
    const plain = await send("/webhooks/esign", "POST", [], "{}");
    expect(plain.status).toBe(202);
    expect(JSON.parse(plain.text)).toMatchObject({ sourceId: "esign", path: "/webhooks/esign", text: "{}" });
    const query = await send("/webhooks/staffing_2?attempt=3", "POST", [], "x");
    expect(JSON.parse(query.text)).toMatchObject({ sourceId: "staffing_2", path: "/webhooks/staffing_2" });
  });

  it("leaves other methods, paths and ids a URL parser could rewrite to the router", async () => {
    routedPaths.length = 0;
    const others = [
      ["GET", "/webhooks/esign"],
      ["PUT", "/webhooks/esign"],
      ["POST", "/webhooks/"],
      ["POST", "/webhooks/esign/"],
      ["POST", "/webhooks/a%20b"],
      ["POST", "/webhooks/.."],
      ["POST", "/webhooks/a\\b"],
      ["POST", "/webhooksx/esign"],
      ["POST", "/events"],
    ] as const;
    for (const [method, path] of others) expect((await send(path, method, [], "")).status).toBe(299);
    expect(routedPaths).toEqual(others.map(([method, path]) => `${method} ${path}`));
  });
});

describe("what it hands the ingress and writes back", () => {
  it("reads headers as a Headers would (repeated joined, trimmed, absent null) and the peer address", async () => {
    const answer = await send(
      "/webhooks/esign",
      "POST",
      [
        ["X-Repeated", "one"],
        ["x-repeated", " two "],
        ["Content-Type", "application/json"],
      ],
      "{}",
    );
    const seen = JSON.parse(answer.text);
    expect(seen.repeated).toBe("one, two");
    expect(seen.absent).toBeNull();
    expect(seen.address).toBe("127.0.0.1");
    expect(seen.listed).toMatchObject({ "x-repeated": "one, two", "content-type": "application/json" });
  });

  it("writes the answer with its headers and a content length", async () => {
    const answer = await send("/webhooks/esign", "POST", [], "{}");
    expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(answer.headers["x-request-id"]).toBe("fixed");
    expect(Number(answer.headers["content-length"])).toBe(Buffer.byteLength(answer.text));
    expect(answer.headers["transfer-encoding"]).toBeUndefined();
  });

  it("refuses a body over the cap while reading it, declared or streamed", async () => {
    const declared = await send("/webhooks/esign", "POST", [["x-limit", "8"]], "0123456789");
    expect(JSON.parse(declared.text).text).toBe("too_large");
    const streamed = await new Promise<string>((resolve, reject) => {
      const url = new URL("/webhooks/esign", base);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: { "x-limit": "8" },
          agent: false,
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            text += c;
          });
          res.on("end", () => resolve(text));
        },
      );
      req.on("error", reject);
      // Chunked, no declared length: the cap is found while reading.
      req.write("01234");
      req.end("56789");
    });
    expect(JSON.parse(streamed).text).toBe("too_large");
  });
});

/** Writes `pieces` on one raw connection (each piece one write) and reads `count` answers' bodies. */
function rawExchange(pieces: string[], count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const socket = connect(Number(url.port), url.hostname);
    let data = Buffer.alloc(0);
    const bodies: string[] = [];
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      for (;;) {
        const headEnd = data.indexOf("\r\n\r\n");
        if (headEnd === -1) return;
        const length = Number(/content-length: (\d+)/i.exec(data.toString("latin1", 0, headEnd))?.[1]);
        if (data.length < headEnd + 4 + length) return;
        bodies.push(data.toString("utf8", headEnd + 4, headEnd + 4 + length));
        data = data.subarray(headEnd + 4 + length);
        if (bodies.length === count) {
          socket.destroy();
          resolve(bodies);
          return;
        }
      }
    });
    socket.on("error", reject);
    socket.on("connect", async () => {
      for (const piece of pieces) await new Promise<void>((done) => socket.write(piece, () => done()));
    });
  });
}

const webhookHead = (body: string) =>
  `POST /webhooks/esign HTTP/1.1\r\nhost: x\r\nx-read-later: 1\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`;

describe("reading a body that already arrived", () => {
  it("takes each of two pipelined requests' bodies whole and only its own", async () => {
    const first = '{"n":"first","é":"ü"}';
    const second = JSON.stringify({ n: "second", pad: "x".repeat(3000) });
    const [a = "", b = ""] = await rawExchange([webhookHead(first) + first + webhookHead(second) + second], 2);
    expect(JSON.parse(a).text).toBe(first);
    expect(JSON.parse(b).text).toBe(second);
  });

  it("reads a body whose rest comes after the head in a later packet", async () => {
    const body = JSON.stringify({ n: "split", pad: "y".repeat(100) });
    const [answer = ""] = await rawExchange([webhookHead(body) + body.slice(0, 10), body.slice(10)], 1);
    expect(JSON.parse(answer).text).toBe(body);
  });

  it("still refuses a declared length over the cap", async () => {
    const body = "0123456789";
    const head = webhookHead(body).replace("x-read-later: 1", "x-read-later: 1\r\nx-limit: 8");
    const [answer = ""] = await rawExchange([head + body], 1);
    expect(JSON.parse(answer).text).toBe("too_large");
  });
});

describe("the switch", () => {
  const gateway = { receiveWebhook };
  it("is on by default and with on, off with off and while tracing is on", () => {
    expect(readWebhookFastPathSetting({})).toBe(true);
    expect(readWebhookFastPathSetting({ GATEWAY_WEBHOOK_FAST_PATH: "" })).toBe(true);
    expect(readWebhookFastPathSetting({ GATEWAY_WEBHOOK_FAST_PATH: "on" })).toBe(true);
    expect(readWebhookFastPathSetting({ GATEWAY_WEBHOOK_FAST_PATH: "off" })).toBe(false);
    expect(webhookFastPathEnabled(gateway, true)).toBe(true);
    expect(webhookFastPathEnabled(gateway, false)).toBe(false);
    expect(webhookFastPathEnabled({ receiveWebhook: undefined }, true)).toBe(false);
  });

  it("refuses any other value by name", () => {
    expect(() => readWebhookFastPathSetting({ GATEWAY_WEBHOOK_FAST_PATH: "false" })).toThrow(
      "GATEWAY_WEBHOOK_FAST_PATH: expected on or off, received false",
    );
  });

  it("stops `gateway serve` with one line and exit 1 on any other value", async () => {
    const dir = await mkdtemp(join(tmpdir(), "gw-fast-path-"));
    const config = join(dir, "gateway.json");
    await writeFile(
      config,
      JSON.stringify({
        server: { host: "127.0.0.1", port: 0 },
        store: { driver: "memory" },
        sources: [{ id: "esign", service: "esign", secrets: ["${TEST_ESIGN_SECRET}"] }],
        admin: { apiKeyHashes: [adminKeyHash("admin_0123456789abcdef")] },
      }),
    );
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [BIN, "serve", "--config", config],
        {
          env: { ...process.env, TEST_ESIGN_SECRET: "whsec_0123456789abcdef", GATEWAY_WEBHOOK_FAST_PATH: "yes" },
          timeout: 60_000,
        },
        (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
      );
    });
    await rm(dir, { recursive: true, force: true });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^gateway serve: GATEWAY_WEBHOOK_FAST_PATH: expected on or off, received yes\n$/);
    expect(run.stdout).not.toContain("listening");
  });

  it("is not installed over a server whose request handling it does not know", () => {
    const bare = createServer();
    const lines: string[] = [];
    const logger = createLogger("warn", (line) => lines.push(line));
    expect(installWebhookFastPath(bare, gateway, logger, NO_PROXY)).toBe(false);
    const twoHandlers = createServer(() => {}).prependListener("request", () => {});
    expect(installWebhookFastPath(twoHandlers, gateway, logger, NO_PROXY)).toBe(false);
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual([
      "webhook fast path not installed: the server has other request handlers",
      "webhook fast path not installed: the server has other request handlers",
    ]);
    expect(
      installWebhookFastPath(
        createServer(() => {}),
        { receiveWebhook: undefined },
        createLogger("silent"),
        NO_PROXY,
      ),
    ).toBe(false);
  });
});
