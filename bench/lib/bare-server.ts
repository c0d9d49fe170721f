/**
 * The baseline: a bare `node:http` server in its own process that reads the body and answers
 * 202, the least any webhook receiver can do. Started with `node bench/lib/bare-server.ts`
 * semantics via `--import tsx`; prints its port on stdout.
 */
import { createServer } from "node:http";

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    Buffer.concat(chunks);
    res.writeHead(202, { "content-type": "application/json" });
    res.end('{"id":"bare","duplicate":false}');
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`PORT ${address.port}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
