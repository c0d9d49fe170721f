/**
 * The zero-config sandbox end to end, as the README's Sandbox walkthrough runs it
 * (adapters/node/sandbox.ts, config/default.ts): `gateway serve` with no configuration in an
 * empty working directory starts the emulators beside the gateway (both on free ports:
 * `--port 0`); a local app (a real HTTP server) is fed by a real `gateway listen` process started
 * in that directory with no credential flag (it finds the development admin key), forwarding
 * `agreement.*`. An agreement created, given its document and sent through the proxy with the
 * development admin key is signed by the emulator (time scale 0.01: a 2 s step takes 20 ms); its
 * `agreement.sent/viewed/signed/completed` webhooks come back through `/webhooks/esign` onto the
 * live stream (`/ws`), into the event log, and through `gateway listen` to the local app, the
 * completed one enriched with the agreement as the emulator now has it. A staffing request whose
 * candidate is scripted to accept ends `completed` the same way. Every wait is bounded and on an
 * observable arrival, never a sleep.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startWebhookReceiver, type WebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { type ListenerProcess, startListener } from "../listen/listen-fixtures.ts";
import { type Frame, openReadyWs, type WsClient } from "../stream/stream-fixtures.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
/** Variables that would configure the gateway or switch the sandbox off: none may leak in. */
const CONFIGURING = /^(ESIGN_|STAFFING_|GATEWAY_)/;
const PDF = Buffer.from("%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n").toString("base64");

let cwd: string;
let child: ChildProcess;
let exited: Promise<unknown>;
let url: string;
let key: string;
let control: string[];
let devSecrets: Record<string, string>;
let ws: WsClient;
/** The local app `gateway listen` forwards to, and the listener. */
let app: WebhookReceiver;
let listener: ListenerProcess;
const lines: string[] = [];

const waiters: { test: (line: string) => boolean; resolve: (line: string) => void }[] = [];

/** Resolves with the first output line (seen or coming) that passes `test`; rejects on exit. */
function lineMatching(test: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const seen = lines.find(test);
    if (seen) return resolve(seen);
    waiters.push({ test, resolve });
    exited.then((code) => reject(new Error(`gateway exited (${code}):\n${lines.join("\n")}`)));
  });
}

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), "gw-sandbox-"));
  const base = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !CONFIGURING.test(name))),
    HOME: cwd,
  };
  child = spawn(process.execPath, [BIN, "serve", "--port", "0"], {
    cwd,
    env: { ...base, GATEWAY_EMULATOR_TIME_SCALE: "0.01" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  exited = new Promise((resolve) => child.once("exit", resolve));
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream! }).on("line", (line) => {
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.test(line))) waiter.resolve(line);
    });
  }
  url = JSON.parse(await lineMatching((line) => line.includes('"msg":"listening"'))).url;
  const sandbox = JSON.parse(await lineMatching((line) => line.includes('"msg":"emulators listening')));
  control = sandbox.control;
  devSecrets = JSON.parse(await readFile(join(cwd, ".data", "dev-secrets.json"), "utf8"));
  key = devSecrets.GATEWAY_ADMIN_KEY as string;
  ws = await openReadyWs(`${url.replace(/^http/, "ws")}/ws`, { authorization: `Bearer ${key}` });
  app = await startWebhookReceiver();
  // As the README has it: `gateway listen <gateway> --forward-to <app> --type 'agreement.*'`.
  listener = await startListener([url, "--forward-to", app.url, "--type", "agreement.*"], { cwd, env: base });
});

afterAll(async () => {
  ws?.ws.close();
  await listener?.kill();
  await app?.close();
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill("SIGTERM");
    await exited;
  }
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

/** A call through the gateway with the development admin key. */
async function call(path: string, body?: unknown, method = body === undefined ? "GET" : "POST") {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** Event types of `subject` on the live stream so far, in arrival order. */
function streamed(subject: string): string[] {
  return ws.log.frames
    .filter((frame: Frame) => frame.type === "event" && frame.event.subject === subject)
    .map((frame: Frame) => frame.event.type);
}

/** Waits (bounded) until `type` about `subject` arrives on the live stream; returns its event. */
async function onStream(subject: string, type: string) {
  const frame = await ws.log.waitFor(
    (f) => f.type === "event" && f.event.subject === subject && f.event.type === type,
    `${type} about ${subject}`,
    20_000,
  );
  return frame.event;
}

/** Events of `subject` in the event log, oldest first, with their types and marks. */
async function logged(subject: string) {
  const answer = await call(`/events?subject=${encodeURIComponent(subject)}&limit=100`);
  expect(answer.status).toBe(200);
  const records = answer.body.events as { marks: string[]; event: { type: string; time: string } }[];
  return records.map((r) => ({ type: r.event.type, marks: r.marks, event: r.event })).reverse();
}

/** A CloudEvent as `gateway listen` POSTs it to the local app. */
interface ForwardedEvent {
  type: string;
  subject?: string;
  enrichment?: { data: Record<string, unknown> };
  enrichmenterror?: string;
}

test("the sandbox labels its emulators and wires both upstreams to them", () => {
  expect(control).toHaveLength(2);
  expect(lines.some((line) => line.includes("upstream not configured"))).toBe(false);
});

test("the README walkthrough: an agreement sent through the proxy completes on the stream, in the log, and enriched at a `gateway listen` app", async () => {
  const created = await call("/api/esign/agreements", {
    title: "Lease 12",
    sender: { name: "Bo Ek", email: "bo@example.com" },
    participants: [{ name: "Anna Svensson", email: "anna@example.com" }],
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const upload = await call(
    `/api/esign/agreements/${id}/documents/main`,
    { filename: "lease.pdf", content_base64: PDF },
    "PUT",
  );
  expect(upload.status).toBe(200);
  const sent = await call(`/api/esign/agreements/${id}/lifecycle`, { action: "send" });
  expect(sent).toEqual({ status: 200, body: { ok: true, status: "sent" } });

  const subject = `agreements/${id}`;
  const completed = await onStream(subject, "agreement.completed");
  expect(completed.source).toBe("/webhooks/esign");
  expect(completed.data.document.signed_pdf_url).toEqual(expect.any(String));
  expect(completed.data.participants.map((p: { email: string }) => p.email)).toContain("anna@example.com");
  const expected = ["agreement.sent", "agreement.viewed", "agreement.signed", "agreement.completed"];
  // Each exactly once (retries are deduplicated by event id), whatever order the POSTs landed in.
  expect(streamed(subject).sort()).toEqual([...expected].sort());

  // The sandbox route enriches the live stream's events with the agreement, fetched afresh.
  expect(completed.enrichment).toMatchObject({ upstream: "esign", path: `/agreements/${id}` });
  expect(completed.enrichment.data).toMatchObject({ id, title: "Lease 12", status: "completed" });

  const log = await logged(subject);
  expect(log.map((e) => e.type).sort()).toEqual([...expected].sort());
  for (const { marks } of log) expect(marks).not.toContain("schema_mismatch");
  // The event log keeps each event as received: enrichment is attached on delivery only.
  for (const { event } of log) expect(event).not.toHaveProperty("enrichment");
  const agreement = await call(`/api/esign/agreements/${id}`);
  expect(agreement.body.status).toBe("completed");

  // The local app got the four events through `gateway listen`, signed with the secret it
  // printed, and `agreement.completed` carries the agreement: title, status, participants.
  const forwarded = () =>
    app.requests
      .map((request) => new Webhook(listener.secret).verify(request.body, request.headers) as ForwardedEvent)
      .filter((event) => event.subject === subject);
  // All four, whatever order the emulator's POSTs landed in: the app gets them in journal order,
  // the order the live stream showed them in.
  await waitFor("the four agreement events at the local app", () => forwarded().length >= expected.length);
  expect(forwarded().map((e) => e.type)).toEqual(streamed(subject));
  const done = forwarded().find((e) => e.type === "agreement.completed") as ForwardedEvent;
  expect(done.enrichmenterror).toBeUndefined();
  expect(done.enrichment?.data).toMatchObject({ id, title: "Lease 12", status: "completed" });
  const parties = done.enrichment?.data.participants as { email: string; status: string }[];
  expect(parties.map((p) => [p.email, p.status]).sort()).toEqual([
    ["anna@example.com", "signed"],
    ["bo@example.com", "signed"],
  ]);
  await waitFor("the listener's line for agreement.completed", () =>
    listener.lines.some((line) => line.includes(`agreement.completed  ${subject}  200`)),
  );
});

test("a staffing request through the proxy is called by the emulator and reports back to the gateway", async () => {
  const staffingControl = control.find((c) => c.endsWith("/staffing/_emulator")) as string;
  const script = await fetch(`${staffingControl}/scripts`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${devSecrets.STAFFING_WEBHOOK_SECRET}` },
    body: JSON.stringify({ candidateId: "c1", answers: [{ intent: "accepted", confidence: 0.97 }] }),
  });
  expect(script.status).toBe(201);
  const created = await call("/api/staffing/staffing-requests", {
    external_id: `shift-${Date.now()}`,
    shift: {
      start_time: "2026-12-01T07:00:00+01:00",
      end_time: "2026-12-01T15:00:00+01:00",
      location: "Ward 4",
      role: "Nurse",
    },
    candidates: [{ id: "c1", name: "Anna", phone: "+46701234567", priority: 1 }],
    rules: { requireManagerApproval: false },
  });
  expect(created.status).toBe(201);
  const subject = `staffing-requests/${created.body.staffingRequestId}`;
  const done = await onStream(subject, "staffing.completed");
  expect(done.source).toBe("/webhooks/staffing");
  expect(done.enrichment.data).toMatchObject({ id: created.body.staffingRequestId, status: "completed" });
  const expected = [
    "staffing.queued",
    "staffing.calling",
    "candidate.responded",
    "candidate.accepted",
    "staffing.completed",
  ];
  expect(streamed(subject).sort()).toEqual([...expected].sort());
  expect((await logged(subject)).map((e) => e.type).sort()).toEqual([...expected].sort());
});
