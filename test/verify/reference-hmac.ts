/**
 * Independent reference for the signature tests: the upstreams' signatures computed directly
 * with `node:crypto` (not with the gateway's sign helpers), and the two crypto ports under test.
 */
import { createHmac } from "node:crypto";
import { createNodeCrypto } from "../../adapters/node/node-crypto.ts";
import { type CryptoPort, createWebCrypto } from "../../src/crypto/crypto-port.ts";

/** Both implementations of the crypto port; every verifier test runs against each. */
export const CRYPTO_PORTS: ReadonlyArray<readonly [string, CryptoPort]> = [
  ["web crypto", createWebCrypto()],
  ["node crypto", createNodeCrypto()],
];

/** Lower-case hex HMAC-SHA256 of the concatenated parts. */
export function referenceHmacHex(secret: string, ...parts: Array<string | Uint8Array>): string {
  const hmac = createHmac("sha256", secret);
  for (const part of parts) hmac.update(part);
  return hmac.digest("hex");
}

/** `X-Svc-Signature` of an e-sign delivery. */
export function referenceEsignHeader(secret: string, body: Uint8Array): string {
  return `sha256=${referenceHmacHex(secret, body)}`;
}

/** The v1 hex of a staffing delivery signed with timestamp text `t` (any string, for hostile cases). */
export function referenceStaffingHex(secret: string, t: string, body: Uint8Array): string {
  return referenceHmacHex(secret, `${t}.`, body);
}

export const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Bodies whose bytes must be verified exactly as received. */
export const RAW_BODIES: ReadonlyArray<readonly [string, Uint8Array]> = [
  ["plain JSON", bytes('{"event_id":"evt-1","event":"agreement.sent"}')],
  ["emoji", bytes('{"event_id":"evt-2","note":"signed 👍🏽 ✍️"}')],
  ["U+2028 and U+2029 inside a string", bytes('{"event_id":"evt-3","note":"line\u2028sep\u2029para"}')],
  [
    "invalid UTF-8 bytes inside a string",
    Uint8Array.from([...bytes('{"event_id":"evt-4","note":"'), 0xff, 0xfe, 0xc3, ...bytes('"}')]),
  ],
  ["empty body", new Uint8Array(0)],
  ["trailing newline and odd spacing", bytes('{ "event_id" : "evt-5" ,"a":[1,2 ]}\n')],
];

/** The same JSON re-serialized (pretty-printed): different bytes, so the signature must fail. */
export function reserialize(body: Uint8Array): Uint8Array {
  return bytes(JSON.stringify(JSON.parse(new TextDecoder().decode(body)), null, 2));
}

/** The value `Headers#get` returns when a header is sent twice (Fetch joins with ", "). */
export function joinedHeader(...values: string[]): string {
  const headers = new Headers();
  for (const value of values) headers.append("x-svc-signature", value);
  return headers.get("x-svc-signature") ?? "";
}
