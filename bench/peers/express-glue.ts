/**
 * Peer for the ingress benchmark: what a team would write instead of the gateway. Express 5 with
 * `express.raw`, both upstream signature schemes checked with `timingSafeEqual`, dedupe by
 * `SET NX EX` and the record kept with `XADD` on a redis-server running AOF `appendfsync always`
 * (acknowledged = on disk, like the gateway). Its own process; prints `PORT <n>`.
 * Env: PEER_REDIS_URL, PEER_ESIGN_SECRET, PEER_STAFFING_SECRET.
 */
import express from "express";
import { Redis } from "ioredis";
import { verifyEsign, verifyStaffing } from "./peer-signatures.ts";

const redis = new Redis(process.env.PEER_REDIS_URL ?? "redis://127.0.0.1:6379");
const twoStep = process.env.PEER_GLUE_TWO_STEP === "1";
// KEYS[1] dedupe key, KEYS[2] stream; ARGV source, id, body. 1 = kept, 0 = duplicate.
const KEEP_ONCE = `if redis.call('SET', KEYS[1], '1', 'EX', 86400, 'NX') then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', '1000000', '*', 'source', ARGV[1], 'id', ARGV[2], 'body', ARGV[3])
  return 1
end
return 0`;
redis.defineCommand("keepOnce", { numberOfKeys: 2, lua: KEEP_ONCE });
const keepOnce = (redis as unknown as { keepOnce(...args: (string | Buffer)[]): Promise<number> }).keepOnce.bind(redis);

const app = express();
app.post("/webhooks/:source", express.raw({ type: "*/*", limit: "1mb" }), async (req, res) => {
  const body = req.body as Buffer;
  const source = req.params.source;
  let identity: string | undefined;
  if (source === "esign") {
    if (!verifyEsign(body, req.get("x-svc-signature"))) return void res.status(401).json({ error: "bad signature" });
    identity = (JSON.parse(body.toString("utf8")) as { event_id?: string }).event_id;
  } else if (source === "staffing") {
    if (!verifyStaffing(body, req.get("x-svc-signature"))) return void res.status(401).json({ error: "bad signature" });
    identity = req.get("x-svc-delivery-id");
  } else return void res.status(404).end();
  if (!identity) return void res.status(400).json({ error: "no identity" });
  try {
    if (twoStep) {
      const fresh = await redis.set(`dedupe:${source}:${identity}`, "1", "EX", 86_400, "NX");
      if (fresh === null) return void res.status(200).json({ id: identity, duplicate: true });
      await redis.xadd("events", "MAXLEN", "~", "1000000", "*", "source", source, "id", identity, "body", body);
    } else if ((await keepOnce(`dedupe:${source}:${identity}`, "events", source, identity, body)) === 0) {
      return void res.status(200).json({ id: identity, duplicate: true });
    }
    res.status(202).json({ id: identity, duplicate: false });
  } catch {
    res.status(503).json({ error: "store unavailable" });
  }
});
const server = app.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`PORT ${address.port}`);
});
process.on("SIGTERM", () => server.close(() => redis.quit().finally(() => process.exit(0))));
