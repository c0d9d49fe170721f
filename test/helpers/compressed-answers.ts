/**
 * The plain JSON bodies the loopback receiver's compressing upstream answers
 * (`GET /compressed/.../<small|large>`, http-sink-receiver.ts), shared with the workerd test
 * that reads them back through the gateway (no Node imports: it also runs inside workerd).
 * Large is past the 64 KiB the Node adapter reads whole, and incompressible enough to stay so.
 */
const noise = Array.from({ length: 150 * 1024 }, (_, i) => String.fromCharCode(33 + ((i * 7919 + (i >> 7)) % 90))).join(
  "",
);

export const COMPRESSED_ANSWERS = {
  small: JSON.stringify({ id: "c-1", name: "Ada", note: "compressed anyway" }),
  large: JSON.stringify({ id: "c-2", blob: noise }),
};
