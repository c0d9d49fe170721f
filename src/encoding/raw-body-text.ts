/**
 * Stores a raw body losslessly as text: the UTF-8 text when the bytes decode without loss
 * (checked with a fatal decoder), else base64. Also answers the bytes back for the event log.
 */
import { fromBase64, toBase64 } from "./base64.ts";

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

export interface EncodedBody {
  text: string;
  encoding: "utf8" | "base64";
}

/** Encodes raw bytes for storage. */
export function encodeRawBody(bytes: Uint8Array): EncodedBody {
  try {
    return { text: strict.decode(bytes), encoding: "utf8" };
  } catch {
    return { text: toBase64(bytes), encoding: "base64" };
  }
}

/** The exact bytes of a stored body. */
export function decodeRawBody(text: string, encoding: "utf8" | "base64" | undefined): Uint8Array {
  return encoding === "utf8" ? encoder.encode(text) : fromBase64(text);
}

/** Base64 of a stored body, whatever its storage encoding. */
export function rawBodyBase64(text: string, encoding: "utf8" | "base64" | undefined): string {
  return encoding === "utf8" ? toBase64(encoder.encode(text)) : text;
}
