/**
 * The client process of the live benchmark (`bench/cases/live.ts` forks it with
 * `LIVE_BENCH_WORKER=1`): opens its share of WebSocket and SSE subscribers, records when each
 * copy of each event arrived, and on request turns those receipts into a latency histogram
 * against the webhooks' 2xx times. Ids are found by scanning the raw frames, not by parsing
 * them, so the client side costs as little CPU as possible on a machine it shares with the
 * gateway.
 */
import http from "node:http";

const MARKER = Buffer.from('"specversion":"1.0","id":"');
export const now = () => performance.timeOrigin + performance.now();

export type ToWorker =
  | { cmd: "connect"; wsUrl: string; sseUrl: string; webSockets: number; sse: number }
  | { cmd: "report"; acks: Record<string, number>; sent: Record<string, number> }
  | { cmd: "exit" };
export type FromWorker =
  | { ready: number; failed: number }
  | { received: number }
  | {
      histogram: Record<string, number>;
      /** Latency from the webhook's request leaving the poster, same buckets. */
      sentHistogram: Record<string, number>;
      deliveries: number;
      max: number;
      lastReceipt: number;
      /** WebSocket messages that carried an event, and their bytes (payload, without framing). */
      eventMessages: number;
      eventBytes: number;
      /** Per event id: its first and last receipt in this process (wall clock ms). */
      spans: Record<string, [number, number]>;
    };

/** Latency histogram bucket width, ms. */
export const BUCKET_MS = 0.1;

async function runWorker() {
  const { default: WebSocket } = await import("ws");
  const receipts = new Map<string, number[]>();
  let received = 0;
  // Bytes of the WebSocket messages that carried an event, to compare the servers' frames.
  let eventBytes = 0;
  let eventMessages = 0;
  const record = (chunk: Buffer, from = 0) => {
    const at = now();
    const before = received;
    let index = chunk.indexOf(MARKER, from);
    while (index !== -1) {
      const start = index + MARKER.length;
      const end = chunk.indexOf(34, start);
      const id = chunk.toString("latin1", start, end);
      const list = receipts.get(id);
      if (list) list.push(at);
      else receipts.set(id, [at]);
      received++;
      index = chunk.indexOf(MARKER, end);
    }
    return received - before;
  };
  const send = (message: FromWorker) => process.send?.(message);
  const sockets: { close(): void }[] = [];

  process.on("message", async (message: ToWorker) => {
    if (message.cmd === "connect") {
      let ready = 0;
      let failed = 0;
      const openOne = (i: number) =>
        new Promise<void>((resolve) => {
          if (i < message.webSockets) {
            const ws = new WebSocket(message.wsUrl, { perMessageDeflate: false });
            sockets.push({ close: () => ws.terminate() });
            let first = true;
            ws.on("message", (data: Buffer) => {
              if (first) {
                first = false;
                ready++;
                return resolve();
              }
              if (record(data) > 0) {
                eventBytes += data.length;
                eventMessages++;
              }
            });
            ws.on("error", () => {
              failed++;
              resolve();
            });
            return;
          }
          const request = http.get(message.sseUrl, { agent: false }, (response) => {
            let first = true;
            response.on("data", (chunk: Buffer) => {
              if (first && chunk.includes('"type":"ready"')) {
                first = false;
                ready++;
                resolve();
              }
              record(chunk);
            });
          });
          sockets.push({ close: () => request.destroy() });
          request.on("error", () => {
            failed++;
            resolve();
          });
        });
      const total = message.webSockets + message.sse;
      for (let i = 0; i < total; i += 50) {
        await Promise.all(Array.from({ length: Math.min(50, total - i) }, (_, k) => openOne(i + k)));
      }
      send({ ready, failed });
      setInterval(() => send({ received }), 250).unref();
    } else if (message.cmd === "report") {
      const histogram: Record<string, number> = {};
      const sentHistogram: Record<string, number> = {};
      let deliveries = 0;
      let max = 0;
      let lastReceipt = 0;
      const spans: Record<string, [number, number]> = {};
      for (const [id, times] of receipts) {
        const ack = message.acks[id];
        if (ack === undefined) continue;
        const sent = message.sent[id] ?? ack;
        spans[id] = [Math.min(...times), Math.max(...times)];
        for (const t of times) {
          const latency = Math.max(0, t - ack);
          const bucket = Math.floor(latency / BUCKET_MS);
          histogram[bucket] = (histogram[bucket] ?? 0) + 1;
          const fromSent = Math.floor(Math.max(0, t - sent) / BUCKET_MS);
          sentHistogram[fromSent] = (sentHistogram[fromSent] ?? 0) + 1;
          deliveries++;
          max = Math.max(max, latency);
          lastReceipt = Math.max(lastReceipt, t);
        }
      }
      send({ histogram, sentHistogram, deliveries, max, lastReceipt, spans, eventMessages, eventBytes });
    } else if (message.cmd === "exit") {
      for (const socket of sockets) socket.close();
      process.exit(0);
    }
  });
}

if (process.env.LIVE_BENCH_WORKER === "1") await runWorker();
