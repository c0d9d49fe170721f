/**
 * Signature checks of the benchmark's peers: e-sign `sha256=<hex>` over the body, staffing
 * `t=<unix>,v1=<hex>` over `<t>.<body>`, HMAC-SHA256 with the secrets of PEER_ESIGN_SECRET /
 * PEER_STAFFING_SECRET. The same work per webhook as the gateway's verification, so the peers are
 * not faster for skipping it. The live peers (ws-peer-server.ts) check one `v1`; the ingress
 * peers (express-glue.ts, minimal-durable-receiver.ts) check the timestamp's tolerance and every
 * `v1` of the header, as the gateway does (`verifyEsign`, `verifyStaffing`).
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

const TOLERANCE_S = 300;

function equalHex(expected: Buffer, given: string): boolean {
  const other = Buffer.from(given, "hex");
  return other.length === expected.length && timingSafeEqual(other, expected);
}

/** An e-sign `x-svc-signature` of `body`. */
export function verifyEsign(body: Buffer, header: string | undefined): boolean {
  if (!header?.startsWith("sha256=")) return false;
  return equalHex(
    createHmac("sha256", secrets.esign ?? "")
      .update(body)
      .digest(),
    header.slice(7),
  );
}

/** A staffing `x-svc-signature` of `body`: a timestamp within 300 s, any `v1` matching. */
export function verifyStaffing(body: Buffer, header: string | undefined): boolean {
  if (!header) return false;
  let t = "";
  const macs: string[] = [];
  for (const part of header.split(",")) {
    const [k, v] = part.split("=");
    if (k === "t" && v) t = v;
    else if (k === "v1" && v) macs.push(v);
  }
  if (!t || Math.abs(Date.now() / 1000 - Number(t)) > TOLERANCE_S) return false;
  const expected = createHmac("sha256", secrets.staffing ?? "")
    .update(`${t}.`)
    .update(body)
    .digest();
  return macs.some((mac) => equalHex(expected, mac));
}
