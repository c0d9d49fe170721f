/**
 * Every sink transport a configuration can name has a Workers entry
 * (adapters/cloudflare/worker-sink-registry.ts) or an explicit "not on Workers" mark, so a new
 * destination type cannot be skipped silently on Workers; and the check itself fails on a
 * planted violation.
 */
import { describe, expect, it } from "vitest";
import { notOnWorkers, workerSinkTransports } from "../../adapters/cloudflare/worker-sink-registry.ts";
import { sinkTransports } from "../../adapters/sink/registry.ts";
import { DestinationSchema } from "../../src/config/schema.ts";
import { defaultTransports } from "../../src/delivery/transport-of.ts";

interface SchemaNode {
  type?: string;
  options?: SchemaNode[];
  entries?: Record<string, { literal?: unknown; wrapped?: { literal?: unknown } } | undefined>;
}

/** The transport of every destination variant the configuration schema accepts (stream excluded). */
function configurableTransports(schema: SchemaNode): string[] {
  if (schema.options) return schema.options.flatMap(configurableTransports);
  const entries = schema.entries ?? {};
  const type = entries.type?.literal;
  if (type === "stream") return [];
  const named = entries.transport?.literal ?? entries.transport?.wrapped?.literal;
  const transport = typeof named === "string" ? named : defaultTransports[String(type)];
  return [transport ?? `<no transport for type ${String(type)}>`];
}

/** Transports with neither a Workers factory nor a mark, or with both. */
function uncoveredOnWorkers(
  transports: Iterable<string>,
  factories: Readonly<Record<string, unknown>>,
  marks: Readonly<Record<string, string>>,
): string[] {
  return [...new Set(transports)].filter((name) => Object.hasOwn(factories, name) === Object.hasOwn(marks, name));
}

describe("Workers sink registry", () => {
  const transports = [
    ...configurableTransports(DestinationSchema as unknown as SchemaNode),
    ...Object.keys(sinkTransports),
  ];

  it("finds the transports of every destination variant", () => {
    expect(new Set(transports)).toEqual(new Set(["http", "redis-stream", "cloudflare-queues", "smtp", "http-email"]));
  });

  it("covers every transport with a Workers factory or a 'not on Workers' mark, never both", () => {
    expect(uncoveredOnWorkers(transports, workerSinkTransports, notOnWorkers)).toEqual([]);
  });

  it("fails on a planted violation: a transport with neither", () => {
    const planted = { ...sinkTransports, "carrier-pigeon": sinkTransports.http };
    expect(uncoveredOnWorkers(Object.keys(planted), workerSinkTransports, notOnWorkers)).toEqual(["carrier-pigeon"]);
    expect(uncoveredOnWorkers(["smtp"], { ...workerSinkTransports, smtp: () => {} }, notOnWorkers)).toEqual(["smtp"]);
  });

  it("every 'not on Workers' mark says what to use instead", () => {
    for (const why of Object.values(notOnWorkers)) expect(why).toMatch(/use /);
  });
});
