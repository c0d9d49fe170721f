/** Joins byte arrays into one (Web standards only); the one byte-concat of the core. */

/**
 * The concatenation of `parts` in a fresh `ArrayBuffer`-backed array. A single part that already
 * owns a plain `ArrayBuffer` is returned as is (no copy).
 */
export function concatBytes(parts: readonly Uint8Array[], size?: number): Uint8Array<ArrayBuffer> {
  const first = parts[0];
  if (parts.length === 1 && first && first.buffer instanceof ArrayBuffer) return first as Uint8Array<ArrayBuffer>;
  let total = size ?? 0;
  if (size === undefined) for (const part of parts) total += part.byteLength;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}
