/**
 * The built-in transforms run in the real sandbox on the documented sample of every event type
 * of every service: each gives a readable message of its format (the type's own title with the
 * event's reference filled in, no template left over), and an unknown type a generic one.
 */
import { describe, expect, it } from "vitest";
import { loadQuickJSNode } from "../../adapters/node/quickjs-node.ts";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { builtinServices } from "../../src/services/registry.ts";
import { toTransformEvent } from "../../src/transform/transform-contract.ts";
import { createTransformRegistry } from "../../src/transform/transform-registry.ts";
import { BUILTIN_TRANSFORMS } from "../../src/transform/transform-schema.ts";

const registry = createTransformRegistry({ destinations: [], services: builtinServices, loadQuickJS: loadQuickJSNode });
const context = { destination: "chat", attempt: 1, headers: {} };

/** The value at `path` in a JSON value. */
const at = (value: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((current, key) => (current as Record<string | number, unknown> | undefined)?.[key], value);

/** The message's title, as each format carries it. */
const titleOf: Record<string, (payload: unknown) => unknown> = {
  slack: (p) => at(p, "blocks", 0, "text", "text"),
  teams: (p) => at(p, "attachments", 0, "content", "body", 0, "text"),
  discord: (p) => at(p, "embeds", 0, "title"),
};

describe("built-in transforms", () => {
  for (const name of BUILTIN_TRANSFORMS) {
    it(`${name}: a readable message for every documented event type`, async () => {
      const transform = await registry.compile({ builtin: name, timeoutMs: 50, memoryLimitMb: 16 });
      let checked = 0;
      for (const service of builtinServices.values()) {
        for (const type of service.eventTypes) {
          const sample = await service.buildSample(
            type,
            "sample-secret-0123456789",
            { uniqueId: `u-${type}`, now: Date.parse("2026-05-01T10:00:00Z"), subjectId: "ref-42" },
            createWebCrypto(),
          );
          const event = {
            specversion: "1.0",
            id: `evt_${type}`,
            source: `/webhooks/${service.name}`,
            type,
            time: "2026-05-01T10:00:00.000Z",
            data: JSON.parse(sample.body),
          };
          const outcome = await transform.run(toTransformEvent(event), context);
          if (!outcome.ok || outcome.skip) throw new Error(`${name} ${type}: ${JSON.stringify(outcome)}`);
          const title = String(titleOf[name]?.(JSON.parse(outcome.json)));
          const heading = service.chatMessages?.[type]?.title.split(":")[0] ?? "";
          expect(heading).not.toBe("");
          expect(title.startsWith(`${heading}: `), `${name} ${type}: ${title}`).toBe(true);
          expect(title.length).toBeGreaterThan(heading.length + 2);
          expect(outcome.json).not.toContain("{{");
          expect(outcome.json).toContain(type);
          checked += 1;
        }
      }
      expect(checked).toBe(25);
      transform.dispose();
    });
  }

  it("formats an undocumented type generically", async () => {
    const transform = await registry.compile({ builtin: "slack", timeoutMs: 50, memoryLimitMb: 16 });
    const outcome = await transform.run(
      toTransformEvent({
        id: "evt_1",
        type: "agreement.teleported",
        source: "/webhooks/esign",
        subject: "agreements/a1",
      }),
      context,
    );
    expect(outcome).toMatchObject({ ok: true, skip: false });
    expect(JSON.parse(outcome.ok && !outcome.skip ? outcome.json : "{}").text).toBe(
      "agreement.teleported: agreements/a1",
    );
    transform.dispose();
  });
});
