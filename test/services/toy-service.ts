/**
 * A third upstream service that exists only in the test tree: webhooks signed
 * `X-Toy-Signature: sha256=<hex>` over the raw body, identified by the body's `id`, about
 * widgets, called with an API key. It shows a service is one module against
 * src/services/service-contract.ts, with no edit to src/.
 */
import { toHex, utf8 } from "../../src/crypto/crypto-port.ts";
import type { UpstreamService } from "../../src/services/service-contract.ts";

const TYPES = ["widget.created", "widget.deleted"] as const;
const PREFIX = "sha256=";

export const toyService: UpstreamService = {
  name: "toy",
  eventTypes: TYPES,
  async verifyWebhook({ source, headers, rawBody }, crypto) {
    const header = headers.get("x-toy-signature");
    if (!header) return { ok: false, reason: "missing_signature" };
    if (!header.startsWith(PREFIX) || !/^[0-9a-f]{64}$/.test(header.slice(PREFIX.length))) {
      return { ok: false, reason: "malformed_signature" };
    }
    const mac = Uint8Array.from(header.slice(PREFIX.length).match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
    for (const secret of source.secrets) {
      if (await crypto.verifyHmacSha256(secret, [rawBody], mac)) return { ok: true };
    }
    return { ok: false, reason: "signature_mismatch" };
  },
  async describeEvent(body) {
    if (typeof body.id !== "string" || body.id === "") return { ok: false, message: "the body has no `id`" };
    const type = typeof body.kind === "string" ? body.kind : undefined;
    const marks = type && (TYPES as readonly string[]).includes(type) ? [] : ["unknown_type"];
    return {
      ok: true,
      identity: body.id,
      identityKind: "toy_id",
      type,
      subject: typeof body.widget === "string" ? `widgets/${body.widget}` : undefined,
      time: body.at,
      marks,
    };
  },
  async signDelivery(secret, rawBody, _options, crypto) {
    return { "x-toy-signature": `${PREFIX}${toHex(await crypto.signHmacSha256(secret, [rawBody]))}` };
  },
  async buildSample(type, secret, options, crypto) {
    const body = JSON.stringify({
      id: `toy-${options.uniqueId}`,
      kind: type,
      widget: options.subjectId ?? "w-1",
      at: new Date(options.now).toISOString(),
    });
    const mac = await crypto.signHmacSha256(secret, [utf8(body)]);
    return { body, headers: { "content-type": "application/json", "x-toy-signature": `${PREFIX}${toHex(mac)}` } };
  },
  proxyCredentials: { kind: "api-key" },
  mailTemplates: {},
};
