/**
 * docs/transformations.md as a reader uses it: every `json config` block is a configuration the
 * real schema accepts (the `file` example read by the Node loader from the page's own module),
 * and the example transforms do what the page says on documented sample events.
 */
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { inlineTransformFiles } from "../../adapters/node/load-config.ts";
import { loadQuickJSNode } from "../../adapters/node/quickjs-node.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { builtinServices } from "../../src/services/registry.ts";
import { toTransformEvent } from "../../src/transform/transform-contract.ts";
import { createTransformRegistry } from "../../src/transform/transform-registry.ts";

const PAGE = new URL("../../docs/transformations.md", import.meta.url);
const WHSEC = `whsec_${Buffer.from("docs-example-signing-secret-0123").toString("base64")}`;
/** Every `${NAME}` of the examples: source secrets take any long string, destination secrets a whsec. */
const env = new Proxy({} as Record<string, string>, { get: () => WHSEC });

async function blocks(info: string): Promise<string[]> {
  const page = await readFile(PAGE, "utf8");
  return [...page.matchAll(new RegExp("```" + info + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1] as string);
}

async function sampleEvent(service: string, type: string) {
  const upstream = builtinServices.get(service);
  if (!upstream) throw new Error(service);
  const sample = await upstream.buildSample(
    type,
    "docs-secret-0123456789",
    { uniqueId: "docs", now: Date.now() },
    createWebCrypto(),
  );
  return { specversion: "1.0", id: "evt_docs", type, source: `/webhooks/${service}`, data: JSON.parse(sample.body) };
}

describe("docs/transformations.md", async () => {
  const configs = await blocks("json config");
  const [module] = await blocks("js");
  const dir = await mkdtemp(join(tmpdir(), "gw-transform-docs-"));
  await mkdir(join(dir, "transforms"));
  await writeFile(join(dir, "transforms", "without-contact-details.js"), module ?? "");
  const resolved = await Promise.all(
    configs.map(async (text) => resolveConfig(await inlineTransformFiles(JSON.parse(text), dir), env)),
  );
  const registry = createTransformRegistry({
    destinations: resolved.flatMap((config) => config.destinations),
    services: builtinServices,
    loadQuickJS: loadQuickJSNode,
  });
  const run = async (destination: string, event: object) => {
    const transform = await registry.forDestination(destination);
    const outcome = await transform?.run(toTransformEvent(event), { destination, attempt: 1, headers: {} });
    if (!outcome?.ok) throw new Error(JSON.stringify(outcome));
    return outcome.skip ? null : JSON.parse(outcome.json);
  };

  it("has three configurations the schema accepts", () => {
    expect(resolved).toHaveLength(3);
  });

  it("formats Slack messages", async () => {
    const message = await run("slack", await sampleEvent("esign", "agreement.completed"));
    expect(message.text).toBe("Agreement completed: crm-deal-4711");
  });

  it("skips by content", async () => {
    const event = await sampleEvent("esign", "agreement.completed");
    expect((await run("crm", event)).id).toBe("evt_docs");
    expect(await run("crm", { ...event, data: { ...event.data, external_source: "other_crm" } })).toBeNull();
  });

  it("removes fields", async () => {
    const event = await sampleEvent("staffing", "candidate.responded");
    expect(event.data.transcript).toBeDefined();
    expect(event.data.candidate.phone).toBeDefined();
    const out = await run("payroll", event);
    expect(out.data.transcript).toBeUndefined();
    expect(out.data.recordingUrl).toBeUndefined();
    const { phone: _phone, ...candidate } = event.data.candidate;
    expect(out.data.candidate).toEqual(candidate);
    expect(out.data.staffingRequestId).toBe(event.data.staffingRequestId);
  });
});
