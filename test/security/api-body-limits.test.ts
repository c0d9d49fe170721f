/**
 * Bodies of the gateway's own API are bounded by the bytes read (docs/configuration.md#request-body-limits),
 * against a real gateway process: a 200 MiB chunked body (no Content-Length) to each endpoint
 * that reads one gets 413 `payload_too_large` in the error envelope as soon as its cap is passed,
 * the connection is closed, and the process's memory does not follow the body.
 */
import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";

const CLIENT_KEY = "client_events_key_for_body_limits_0123456789";
const BODY_BYTES = 200 * 1024 * 1024;
const PIECE = Buffer.alloc(64 * 1024, 0x20);

let gw: GatewayProcess;
beforeAll(async () => {
  const secrets = makeSecrets();
  const dataDir = await mkdtemp(join(tmpdir(), "gw-body-limits-"));
  const config = {
    ...defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey)),
    clients: [{ id: "console", apiKeyHashes: [adminKeyHash(CLIENT_KEY)], scopes: { events: true } }],
    testEvents: true,
    // Never reached: the tests only need a destination to exist for its bulk replay.
    destinations: [
      {
        id: "hook",
        type: "http",
        url: "http://127.0.0.1:9/hook",
        secrets: ["${TEST_WHSEC}"],
        allowCidrs: ["127.0.0.1/32"],
      },
    ],
  };
  gw = await startGatewayProcess({ config, secrets, dataDir, env: { TEST_WHSEC: `whsec_${"A".repeat(32)}` } });
}, 60_000);
afterAll(async () => {
  await gw?.kill();
});

/** The gateway's resident set and its peak so far, bytes (/proc/<pid>/status). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

interface Outcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  sent: number;
}

/**
 * Streams up to `BODY_BYTES` of spaces as a chunked body, one piece at a time (written only when
 * the socket drained), and stops writing as soon as the gateway answers or closes.
 */
function sendHugeChunkedBody(url: string, key: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let answered = false;
    let sent = 0;
    const req = request(url, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "transfer-encoding": "chunked" },
    });
    req.on("response", (res) => {
      answered = true;
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, sent });
      });
      res.on("error", reject);
    });
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    const writeMore = () => {
      while (!answered && !req.destroyed && sent < BODY_BYTES) {
        sent += PIECE.length;
        if (!req.write(PIECE)) {
          req.once("drain", writeMore);
          return;
        }
      }
      if (!answered && !req.destroyed && sent >= BODY_BYTES) req.end();
    };
    writeMore();
  });
}

const endpoints: [path: string, who: "admin" | "client"][] = [
  ["/events/replay", "client"],
  ["/filters/test", "client"],
  ["/transforms/test", "admin"],
  ["/events/erase", "admin"],
  ["/events/retention", "admin"],
  ["/destinations/hook/replay", "client"],
  ["/sources/esign/test-events", "admin"],
  ["/events/evt_00000000000000000000000000/replay", "client"],
];

test.each(endpoints)(
  "a 200 MiB chunked body to POST %s (%s key) gets 413 at its cap, closed, memory bounded",
  async (path, who) => {
    const pid = gw.child.pid as number;
    const before = memoryOf(pid);
    const outcome = await sendHugeChunkedBody(`${gw.url}${path}`, who === "admin" ? gw.secrets.adminKey : CLIENT_KEY);
    const after = memoryOf(pid);
    expect(outcome.status).toBe(413);
    expect(String(outcome.headers.connection).toLowerCase()).toBe("close");
    expect(outcome.headers["content-type"]).toMatch(/^application\/json/);
    const envelope = JSON.parse(outcome.body);
    expect(envelope.error.code).toBe("payload_too_large");
    expect(envelope.error.details.limit).toBeLessThanOrEqual(1024 * 1024);
    // The answer came long before the end of the body (the client stopped writing there).
    expect(outcome.sent).toBeLessThan(BODY_BYTES / 4);
    // The peak resident set after the request, against the resident set before it.
    const growth = after.peak - before.rss;
    console.log(
      `${path}: sent ${(outcome.sent / 2 ** 20).toFixed(1)} MiB, RSS growth ≤ ${(growth / 2 ** 20).toFixed(1)} MiB`,
    );
    expect(growth).toBeLessThanOrEqual(64 * 1024 * 1024);
  },
  120_000,
);
