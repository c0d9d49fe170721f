/**
 * Raw bytes end to end against a real process: signatures are checked on the exact bytes
 * received, bodies with emoji, U+2028, a BOM or invalid UTF-8 are accepted, and the stored
 * `raw_body_base64` is byte-for-byte what was sent. A re-serialized body no longer verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import {
  adminGet,
  expectErrorEnvelope,
  postWebhook,
  readAnswer,
  signEsignBytes,
  signStaffingBytes,
} from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "./gateway-fixtures.ts";

let gw: GatewayProcess;

beforeAll(async () => {
  gw = await startEditedGatewayProcess(() => {});
});
afterAll(async () => {
  await gw.kill();
});

const bytes = (...parts: (string | number[])[]) =>
  new Uint8Array(Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : Buffer.from(p)))));

/** An e-sign body with odd but legal formatting around `middle` (raw bytes inside a string). */
function esignBody(middle: (string | number[])[]) {
  return bytes(
    `{ "event_id" : "evt-${crypto.randomUUID()}",\n  "event": "agreement.sent", "note": "`,
    ...middle,
    '" }\n',
  );
}

const CASES: [string, (string | number[])[]][] = [
  ["emoji", ["signed \u{1F58A}\u{FE0F} by \u{1F469}\u{200D}\u{1F4BC}"]],
  ["U+2028 and U+2029 unescaped", ["line\u2028separator\u2029paragraph"]],
  [
    "invalid UTF-8 (stray bytes, overlong, lone surrogate, truncated)",
    [[0xff, 0xfe], "x", [0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xe2, 0x82]],
  ],
  ["escaped unicode left as escapes", ["\\u00e9\\ud83d\\ude00\\u2028"]],
];

async function storedRawBody(id: string): Promise<Uint8Array> {
  const { status, body } = await adminGet(gw.url, `/events/${id}`, gw.secrets.adminKey);
  expect(status).toBe(200);
  return new Uint8Array(Buffer.from(body.raw_body_base64, "base64"));
}

describe("e-sign", () => {
  for (const [name, middle] of CASES) {
    it(`accepts a body with ${name} and stores its exact bytes`, async () => {
      const body = esignBody(middle);
      const answer = await readAnswer(
        await postWebhook(gw.url, "esign", { body, headers: await signEsignBytes(gw.secrets.esign, body) }),
      );
      expect(answer.status).toBe(202);
      expect(Buffer.compare(await storedRawBody(answer.body.id), body)).toBe(0);
    });
  }

  it("keeps a leading BOM in the stored bytes", async () => {
    const body = bytes([0xef, 0xbb, 0xbf], `{"event_id":"evt-${crypto.randomUUID()}","event":"agreement.viewed"}`);
    const answer = await readAnswer(
      await postWebhook(gw.url, "esign", { body, headers: await signEsignBytes(gw.secrets.esign, body) }),
    );
    expect(answer.status).toBe(202);
    expect(Buffer.compare(await storedRawBody(answer.body.id), body)).toBe(0);
  });

  it("parses the emoji body into the envelope's data", async () => {
    const body = esignBody(["\u{1F600}\u2028"]);
    const answer = await readAnswer(
      await postWebhook(gw.url, "esign", { body, headers: await signEsignBytes(gw.secrets.esign, body) }),
    );
    const { body: detail } = await adminGet(gw.url, `/events/${answer.body.id}`, gw.secrets.adminKey);
    expect(detail.event.data.note).toBe("\u{1F600}\u2028");
  });

  it("answers 401 to a re-serialized body carrying the original signature", async () => {
    const body = esignBody(["caf\u00e9 \u{1F600}"]);
    const headers = await signEsignBytes(gw.secrets.esign, body);
    const reserialized = new TextEncoder().encode(JSON.stringify(JSON.parse(new TextDecoder().decode(body))));
    expect(Buffer.compare(reserialized, body)).not.toBe(0);
    const error = await expectErrorEnvelope(
      await postWebhook(gw.url, "esign", { body: reserialized, headers }),
      401,
      "invalid_signature",
    );
    expect(error.details).toEqual({ reason: "signature_mismatch" });
    // The original bytes with the same signature still verify.
    expect((await postWebhook(gw.url, "esign", { body, headers })).status).toBe(202);
  });
});

describe("staffing", () => {
  it("accepts invalid UTF-8 and emoji with CRLF and stores the exact bytes", async () => {
    const body = bytes(
      '{"event":"candidate.responded",\r\n"staffingRequestId":"sr_1","intent":"accepted","transcript":"',
      "Ja \u{1F44D}\u2028",
      [0xff, 0xc3],
      '"}\r\n',
    );
    const headers = {
      ...(await signStaffingBytes(gw.secrets.staffing, body)),
      "x-svc-delivery-id": crypto.randomUUID(),
    };
    const answer = await readAnswer(await postWebhook(gw.url, "staffing", { body, headers }));
    expect(answer.status).toBe(202);
    expect(Buffer.compare(await storedRawBody(answer.body.id), body)).toBe(0);

    const reserialized = new TextEncoder().encode(JSON.stringify(JSON.parse(new TextDecoder().decode(body))));
    const resent = await postWebhook(gw.url, "staffing", { body: reserialized, headers });
    await expectErrorEnvelope(resent, 401, "invalid_signature");
  });
});
