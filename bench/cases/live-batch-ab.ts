/**
 * A/B of the WebSocket fan-out's write path (issue 35 item 3), apart from the rest of the gateway:
 * CPU per frame of handing one fan-out turn of K events to 2,000 loopback `ws` subscribers
 * (two client processes), three ways, alternating on the same sockets:
 *   - `per frame`: each event written to every peer on its own (one write per frame);
 *   - `corked`:    per peer, the socket corked, each frame written, uncorked (Node's writev of K
 *                  buffers per peer; the gateway's path before the batch);
 *   - `batch`:     per peer, the turn's frames handed to the Node text sender as one batch
 *                  (adapters/node/node-websocket-text.ts: bytes joined once, one write per peer).
 * CPU is the server process's (user + system) from the first write of a turn until its write
 * callbacks ran, divided by the frames written. Frames are ~1 KB, as the live bench's.
 *
 * `node --import tsx bench/cases/live-batch-ab.ts` (env: AB_SUBSCRIBERS=2000, AB_K=1,2,4,
 * AB_ROUNDS=5, AB_TURNS=40). Prints the median per mode and K, and every round's value.
 */
import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Peer } from "crossws";
import WebSocket, { WebSocketServer } from "ws";
import { sendNodeWebSocketText } from "../../adapters/node/node-websocket-text.ts";

async function client() {
  const count = Number(process.env.AB_CLIENT_SOCKETS);
  let open = 0;
  for (let i = 0; i < count; i++) {
    const ws = new WebSocket(String(process.env.AB_URL), { perMessageDeflate: false });
    ws.on("message", () => {});
    ws.on("open", () => {
      if (++open === count) process.send?.("ready");
    });
  }
  process.on("message", (message) => message === "exit" && process.exit(0));
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function main() {
  const subscribers = Number(process.env.AB_SUBSCRIBERS) || 2000;
  const ks = (process.env.AB_K ?? "1,2,4").split(",").map(Number);
  const rounds = Number(process.env.AB_ROUNDS) || 5;
  const turns = Number(process.env.AB_TURNS) || 40;
  const http = createServer();
  const wss = new WebSocketServer({ server: http, perMessageDeflate: false });
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  const url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const children: ChildProcess[] = [0, 1].map((i) =>
    fork(new URL(import.meta.url).pathname, [], {
      execArgv: ["--import", "tsx"],
      env: {
        ...process.env,
        AB_CHILD: "1",
        AB_URL: url,
        AB_CLIENT_SOCKETS: String(Math.floor(subscribers / 2) + (i < subscribers % 2 ? 1 : 0)),
      },
    }),
  );
  await Promise.all(children.map((child) => once(child, "message")));
  const peers = [...wss.clients].map((ws) => ({ _internal: { ws } }) as unknown as Peer);
  const socketOf = (peer: Peer) => (peer as unknown as { _internal: { ws: { _socket: Socket } } })._internal.ws._socket;
  let seq = 0;
  const frameText = () =>
    JSON.stringify({
      type: "event",
      cursor: String(++seq).padStart(16, "0"),
      event: { specversion: "1.0", id: crypto.randomUUID(), source: "esign", data: { note: "x".repeat(800) } },
    });
  const modes: Record<string, (frames: string[]) => void> = {
    "per frame": (frames) => {
      for (const frame of frames) for (const peer of peers) sendNodeWebSocketText(peer, frame);
    },
    corked: (frames) => {
      for (const peer of peers) {
        const socket = socketOf(peer);
        socket.cork();
        for (const frame of frames) sendNodeWebSocketText(peer, frame);
        socket.uncork();
      }
    },
    batch: (frames) => {
      for (const peer of peers) sendNodeWebSocketText(peer, frames);
    },
  };
  console.log(`live batch A/B: ${peers.length} subscribers, ${turns} turns per round, CPU µs per frame`);
  for (const k of ks) {
    const results: Record<string, number[]> = {};
    for (let round = 0; round < rounds; round++) {
      for (const [name, run] of Object.entries(modes)) {
        let cpu = 0;
        for (let turn = 0; turn < turns; turn++) {
          const frames = Array.from({ length: k }, frameText);
          const before = process.cpuUsage();
          run(frames);
          // The writes' callbacks (ticks and immediates) belong to the turn's cost.
          await new Promise((resolve) => setImmediate(resolve));
          const used = process.cpuUsage(before);
          cpu += used.user + used.system;
          // Let the clients read before the next turn (idle time is not counted).
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const perFrame = cpu / turns / peers.length / k;
        const values = results[name] ?? [];
        values.push(Number(perFrame.toFixed(2)));
        results[name] = values;
      }
    }
    for (const [name, values] of Object.entries(results)) {
      console.log(`  K=${k}  ${name.padEnd(10)} median ${median(values).toFixed(2)}   rounds ${values.join(", ")}`);
    }
  }
  for (const child of children) child.send("exit");
  await Promise.all(children.map((child) => once(child, "exit")));
  for (const ws of wss.clients) ws.terminate();
  http.close();
}

if (process.env.AB_CHILD === "1") await client();
else await main();
