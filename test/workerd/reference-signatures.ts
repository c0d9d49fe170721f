/**
 * Reference signatures inside workerd, computed with `crypto.subtle` directly (not with the
 * gateway's sign helpers), and the secrets the Worker was given (vitest.workers.config.ts).
 */
import { env } from "cloudflare:workers";

export const ESIGN_SECRET = env.ESIGN_WEBHOOK_SECRET;
export const STAFFING_SECRET = env.STAFFING_WEBHOOK_SECRET;

const encoder = new TextEncoder();

/** Lower-case hex HMAC-SHA256 of `data` under `secret`. */
export async function hmacHex(secret: string, data: Uint8Array<ArrayBuffer>): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, data));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** `X-Svc-Signature` of an e-sign body. */
export async function esignSignature(secret: string, body: string): Promise<string> {
  return `sha256=${await hmacHex(secret, encoder.encode(body))}`;
}

/** `X-Svc-Signature` of a staffing body signed at `t` (unix seconds). */
export async function staffingSignature(secret: string, body: string, t: number): Promise<string> {
  return `t=${t},v1=${await hmacHex(secret, encoder.encode(`${t}.${body}`))}`;
}

export const utf8 = (text: string): Uint8Array<ArrayBuffer> => encoder.encode(text);
