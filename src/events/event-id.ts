/**
 * Gateway event ids are a deterministic function of (source id, upstream identity), so every
 * copy of one upstream event, on any instance, carries the same id
 * (docs/ingress-and-verification.md#the-event-envelope).
 */
import { type CryptoPort, toHex, utf8 } from "../crypto/crypto-port.ts";

/** `evt_` + the first 128 bits of SHA-256(sourceId NUL identity), hex. */
export async function deriveEventId(sourceId: string, identity: string, crypto: CryptoPort): Promise<string> {
  const digest = await crypto.sha256(utf8(`${sourceId}\u0000${identity}`));
  return `evt_${toHex(digest.subarray(0, 16))}`;
}

const EVENT_ID = /^evt_[0-9a-f]{32}$/;

/** True for strings shaped like a gateway event id. */
export function isEventId(value: string): boolean {
  return EVENT_ID.test(value);
}
