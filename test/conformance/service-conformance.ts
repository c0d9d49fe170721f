/**
 * The upstream service conformance suite (src/services/service-contract.ts): every service
 * module runs it from test/services/<name>.test.ts. For every documented event type the
 * service's own sample verifies, is described without `unknown_type`, and keeps its identity
 * stable; tampered, unsigned and foreign-secret deliveries are refused; well-formed headers alone
 * stop at `signature_mismatch` (the ingress's precheck); the credential kind and the default
 * templates are well formed; what `signDelivery` signs verifies. The optional
 * `enrichment.resourcePath` is checked when present: it names a resource for the samples that
 * name a subject, encoding the id so it stays one segment.
 */
import { describe, expect, it } from "vitest";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import type { ServiceSource, UpstreamService } from "../../src/services/service-contract.ts";

const crypto = createWebCrypto();
const SECRET = "conformance-secret-0123456789abcdef";
const NOW = Date.UTC(2026, 10, 24, 12);

const source = (service: UpstreamService): ServiceSource & { service: string } => ({
  id: `${service.name}-source`,
  service: service.name,
  secrets: [SECRET],
  toleranceSeconds: 300,
  identity: "delivery-id",
});

/** Runs the service contract's cases against one service module. */
export function testUpstreamService(service: UpstreamService): void {
  describe(`service conformance: ${service.name}`, () => {
    const sampleOf = (type: string, uniqueId = "u-1") =>
      service.buildSample(type, SECRET, { uniqueId, now: NOW }, crypto);
    const deliveryOf = async (type: string, uniqueId?: string) => {
      const sample = await sampleOf(type, uniqueId);
      return {
        source: source(service),
        headers: new Headers(sample.headers),
        rawBody: new TextEncoder().encode(sample.body),
        nowMs: NOW,
      };
    };

    it("has a lower-case name and documented event types", () => {
      expect(service.name).toMatch(/^[a-z][a-z0-9-]*$/);
      expect(service.eventTypes.length).toBeGreaterThan(0);
      expect(new Set(service.eventTypes).size).toBe(service.eventTypes.length);
    });

    it.each(service.eventTypes.map((type) => [type]))("verifies and describes its own %s sample", async (type) => {
      const delivery = await deliveryOf(type);
      expect(await service.verifyWebhook(delivery, crypto)).toEqual({ ok: true });
      const body = JSON.parse(new TextDecoder().decode(delivery.rawBody)) as Record<string, unknown>;
      const facts = await service.describeEvent(body, delivery, crypto);
      if (!facts.ok) throw new Error(facts.message);
      expect(facts.type).toBe(type);
      expect(facts.identity.length).toBeGreaterThan(0);
      expect(facts.identity.length).toBeLessThanOrEqual(200);
      expect(facts.marks).not.toContain("unknown_type");
      expect(facts.marks).not.toContain("schema_mismatch");
      const again = await service.describeEvent(body, delivery, crypto);
      expect(again.ok && again.identity).toBe(facts.identity);
    });

    it("gives distinct identities to distinct deliveries", async () => {
      const type = service.eventTypes[0] as string;
      const identities = new Set<string>();
      for (const uniqueId of ["a", "b", "c"]) {
        const delivery = await deliveryOf(type, uniqueId);
        const body = JSON.parse(new TextDecoder().decode(delivery.rawBody)) as Record<string, unknown>;
        const facts = await service.describeEvent(body, delivery, crypto);
        if (facts.ok) identities.add(facts.identity);
      }
      expect(identities.size).toBe(3);
    });

    it("refuses a tampered body, a missing signature and another secret", async () => {
      const delivery = await deliveryOf(service.eventTypes[0] as string);
      const tampered = {
        ...delivery,
        rawBody: new TextEncoder().encode(`${new TextDecoder().decode(delivery.rawBody)} `),
      };
      expect(await service.verifyWebhook(tampered, crypto)).toMatchObject({ ok: false });
      const headers = new Headers();
      const unsigned = { ...delivery, headers };
      expect(await service.verifyWebhook(unsigned, crypto)).toEqual({ ok: false, reason: "missing_signature" });
      const other = { ...delivery, source: { ...delivery.source, secrets: ["another-secret-0123456789abcdef"] } };
      expect(await service.verifyWebhook(other, crypto)).toEqual({ ok: false, reason: "signature_mismatch" });
    });

    it("with no secret and no body, stops at signature_mismatch on well-formed headers only", async () => {
      // The ingress checks the headers' form this way before reading a body (src/ingress/precheck-signature.ts).
      const delivery = await deliveryOf(service.eventTypes[0] as string);
      const headersOnly = { ...delivery, source: { ...delivery.source, secrets: [] }, rawBody: new Uint8Array(0) };
      expect(await service.verifyWebhook(headersOnly, crypto)).toEqual({ ok: false, reason: "signature_mismatch" });
      const unsigned = { ...headersOnly, headers: new Headers() };
      expect(await service.verifyWebhook(unsigned, crypto)).toEqual({ ok: false, reason: "missing_signature" });
    });

    it("checks the signature form as its verifier does, and verifies with the parsed form it hands over", async () => {
      const check = service.checkSignatureForm?.bind(service);
      if (!check) return;
      const delivery = await deliveryOf(service.eventTypes[0] as string);
      const signature = delivery.headers.get("x-svc-signature") ?? "";
      // Header variants: as signed, absent, empty, cut short, junk in front, doubled, and each
      // header of the delivery dropped in turn.
      const variants: Headers[] = [
        delivery.headers,
        new Headers(),
        new Headers({ ...Object.fromEntries(delivery.headers), "x-svc-signature": "" }),
        new Headers({ ...Object.fromEntries(delivery.headers), "x-svc-signature": signature.slice(0, -2) }),
        new Headers({ ...Object.fromEntries(delivery.headers), "x-svc-signature": `x${signature}` }),
        new Headers({ ...Object.fromEntries(delivery.headers), "x-svc-signature": `${signature}, ${signature}` }),
        ...[...delivery.headers.keys()].map((name) => {
          const headers = new Headers(delivery.headers);
          headers.delete(name);
          return headers;
        }),
      ];
      for (const headers of variants) {
        const checked = check(headers);
        const headersOnly = {
          ...delivery,
          headers,
          source: { ...delivery.source, secrets: [] },
          rawBody: new Uint8Array(0),
        };
        const verified = await service.verifyWebhook(headersOnly, crypto);
        expect(checked.ok ? "signature_mismatch" : checked.reason).toBe(verified.ok ? "ok" : verified.reason);
        if (!checked.ok) continue;
        // The parsed form stands in for the headers' parse: the real secret verifies, another does not.
        const withForm = { ...delivery, headers, signatureForm: checked.form };
        if (headers === delivery.headers) expect(await service.verifyWebhook(withForm, crypto)).toEqual({ ok: true });
        const other = { ...withForm, source: { ...delivery.source, secrets: ["another-secret-0123456789abcdef"] } };
        expect(await service.verifyWebhook(other, crypto)).toEqual({ ok: false, reason: "signature_mismatch" });
      }
    });

    it("verifies what its own signDelivery signs, and only with that secret", async () => {
      const rawBody = new TextEncoder().encode((await sampleOf(service.eventTypes[0] as string)).body);
      const headers = await service.signDelivery(
        SECRET,
        rawBody,
        { nowMs: NOW, deliveryId: "dlv-conformance" },
        crypto,
      );
      expect(headers).not.toHaveProperty("content-type");
      const delivery = { source: source(service), headers: new Headers(headers), rawBody, nowMs: NOW };
      expect(await service.verifyWebhook(delivery, crypto)).toEqual({ ok: true });
      const foreign = await service.signDelivery(
        "another-secret-0123456789abcdef",
        rawBody,
        { nowMs: NOW, deliveryId: "dlv-conformance" },
        crypto,
      );
      expect(await service.verifyWebhook({ ...delivery, headers: new Headers(foreign) }, crypto)).toEqual({
        ok: false,
        reason: "signature_mismatch",
      });
    });

    it.runIf(service.enrichment !== undefined)("names the resource of events that have a subject", async () => {
      const enrichment = service.enrichment;
      if (!enrichment) throw new Error("no enrichment");
      const subjectId = "id with/../slash?&#";
      let named = 0;
      for (const type of service.eventTypes) {
        const sample = await service.buildSample(type, SECRET, { uniqueId: "e-1", now: NOW, subjectId }, crypto);
        const data = JSON.parse(sample.body) as unknown;
        const path = enrichment.resourcePath({ type, data });
        if (path === undefined) continue;
        named += 1;
        expect(path).toMatch(/^\/[A-Za-z0-9._~%/-]+$/);
        expect(path.endsWith(`/${encodeURIComponent(subjectId)}`)).toBe(true);
        expect(path).not.toContain("/../");
      }
      expect(named).toBeGreaterThan(0);
      for (const data of [{}, null, "text", { agreement_id: 7, staffingRequestId: ["x"] }]) {
        expect(enrichment.resourcePath({ type: service.eventTypes[0] as string, data })).toBeUndefined();
      }
    });

    it("names a credential kind and templates for documented types only", () => {
      expect(["oauth-client-credentials", "api-key"]).toContain(service.proxyCredentials.kind);
      for (const [type, template] of Object.entries(service.mailTemplates)) {
        expect(service.eventTypes).toContain(type);
        expect(template.subject.length).toBeGreaterThan(0);
        expect(template.text.length).toBeGreaterThan(0);
      }
    });

    it("describes every documented event type for chat, or none (built-in transforms)", () => {
      if (!service.chatMessages) return;
      expect(Object.keys(service.chatMessages).sort()).toEqual([...service.eventTypes].sort());
      for (const message of Object.values(service.chatMessages)) {
        expect(message.title).toMatch(/\S/);
        expect(message.text).toMatch(/\S/);
      }
    });
  });
}
