/**
 * Signature check of the live benchmark's peers (naive-ws-broadcast.ts, ws-broadcast.ts): e-sign
 * `sha256=<hex>` over the body, staffing `t=<unix>,v1=<hex>` over `<t>.<body>`, HMAC-SHA256 with
 * the secrets of PEER_ESIGN_SECRET / PEER_STAFFING_SECRET. The same work per webhook as the
 * gateway's verification, so the peers are not faster for skipping it.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

const secrets: Record<string, string> = {
  esign: process.env.PEER_ESIGN_SECRET ?? "",
  staffing: process.env.PEER_STAFFING_SECRET ?? "",
};

/** Whether `header` is a valid signature of `body` for `source` (`esign` or `staffing`). */
export function verifyPeerSignature(source: string, body: Buffer, header: string): boolean {
  const secret = secrets[source];
  if (!secret) return false;
  let signed: Buffer | string = body;
  let mac = "";
  if (source === "esign") mac = header.startsWith("sha256=") ? header.slice(7) : "";
  else {
    const t = /(?:^|,)t=(\d+)/.exec(header)?.[1];
    mac = /(?:^|,)v1=([0-9a-f]+)/.exec(header)?.[1] ?? "";
    if (!t) return false;
    signed = Buffer.concat([Buffer.from(`${t}.`), body]);
  }
  const expected = createHmac("sha256", secret).update(signed).digest();
  const given = Buffer.from(mac, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
