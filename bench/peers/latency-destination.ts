/**
 * The destination of the latency benchmark, in its own process as a real destination is: a
 * loopback HTTP server that answers 204 and notes when each delivery (by `webhook-id`) arrived,
 * on the machine's monotonic clock (`process.hrtime`, the same in every process), so the load
 * generator's event loop is never the destination's. Prints `PORT <n>`; sends its receipts to
 * the parent over IPC as `{ receipts: [id, ms][], connections }` every 10 ms while new ones came.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;
let pending: [string, number][] = [];
let connections = 0;

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    pending.push([String(req.headers["webhook-id"]), monotonicMs()]);
    res.writeHead(204).end();
  });
});
server.on("connection", () => connections++);

const flush = setInterval(() => {
  if (pending.length === 0) return;
  const receipts = pending;
  pending = [];
  process.send?.({ receipts, connections });
}, 10);

process.on("disconnect", () => {
  clearInterval(flush);
  server.close();
  server.closeAllConnections();
});

server.listen(0, "127.0.0.1", () => {
  console.log(`PORT ${(server.address() as AddressInfo).port}`);
});
