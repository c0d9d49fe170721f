/**
 * A real OTLP/HTTP trace receiver on 127.0.0.1 (random port): `POST /v1/traces` in
 * `application/x-protobuf` (decoded here by the field numbers of opentelemetry-proto's
 * trace.proto and common.proto) or `application/json` (OTLP/JSON: hex ids, camelCase fields).
 * Both decode into the same span shape, so tests assert on what arrived, not on an encoding.
 * `GET /spans` lists them as JSON (for the workerd tests, which cannot share memory with it).
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  links: { traceId: string; spanId: string }[];
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the export requests so far. */
  contentTypes: string[];
  /** Resolves with the spans once `predicate` holds (checked after each export), or rejects after `timeoutMs`. */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

// --- protobuf wire format ---------------------------------------------------------------------

interface Field {
  no: number;
  wire: number;
  /** varint or fixed value */
  num?: bigint;
  bytes?: Uint8Array;
}

function readFields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[pos++] as number;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, num: varint() });
    else if (wire === 1) {
      const view = new DataView(buf.buffer, buf.byteOffset + pos, 8);
      out.push({ no, wire, num: view.getBigUint64(0, true), bytes: buf.subarray(pos, pos + 8) });
      pos += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, wire, bytes: buf.subarray(pos, pos + len) });
      pos += len;
    } else if (wire === 5) {
      const view = new DataView(buf.buffer, buf.byteOffset + pos, 4);
      out.push({ no, wire, num: BigInt(view.getUint32(0, true)) });
      pos += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const hex = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString("hex") : "");
const text = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString("utf8") : "");

function decodeAnyValue(buf: Uint8Array): unknown {
  for (const f of readFields(buf)) {
    if (f.no === 1) return text(f.bytes);
    if (f.no === 2) return f.num === 1n;
    if (f.no === 3) return Number(BigInt.asIntN(64, f.num ?? 0n));
    if (f.no === 4) return new DataView((f.bytes as Uint8Array).slice().buffer).getFloat64(0, true);
    if (f.no === 5)
      return readFields(f.bytes as Uint8Array)
        .filter((v) => v.no === 1)
        .map((v) => decodeAnyValue(v.bytes as Uint8Array));
  }
  return undefined;
}

function decodeAttributes(fields: Field[], no: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields.filter((x) => x.no === no)) {
    const kv = readFields(f.bytes as Uint8Array);
    const key = text(kv.find((x) => x.no === 1)?.bytes);
    const value = kv.find((x) => x.no === 2);
    out[key] = value ? decodeAnyValue(value.bytes as Uint8Array) : undefined;
  }
  return out;
}

function decodeProtobuf(body: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of readFields(body).filter((f) => f.no === 1)) {
    const rsFields = readFields(rs.bytes as Uint8Array);
    const resourceBytes = rsFields.find((f) => f.no === 1)?.bytes;
    const resource = resourceBytes ? decodeAttributes(readFields(resourceBytes), 1) : {};
    for (const ss of rsFields.filter((f) => f.no === 2)) {
      for (const sp of readFields(ss.bytes as Uint8Array).filter((f) => f.no === 2)) {
        const s = readFields(sp.bytes as Uint8Array);
        const one = (no: number) => s.find((f) => f.no === no);
        const status = one(15)?.bytes;
        spans.push({
          traceId: hex(one(1)?.bytes),
          spanId: hex(one(2)?.bytes),
          parentSpanId: hex(one(4)?.bytes),
          name: text(one(5)?.bytes),
          kind: Number(one(6)?.num ?? 0n),
          attributes: decodeAttributes(s, 9),
          statusCode: status ? Number(readFields(status).find((f) => f.no === 3)?.num ?? 0n) : 0,
          links: s
            .filter((f) => f.no === 13)
            .map((l) => {
              const lf = readFields(l.bytes as Uint8Array);
              return {
                traceId: hex(lf.find((f) => f.no === 1)?.bytes),
                spanId: hex(lf.find((f) => f.no === 2)?.bytes),
              };
            }),
          resource,
        });
      }
    }
  }
  return spans;
}

// --- OTLP/JSON ----------------------------------------------------------------------------------

interface JsonKeyValue {
  key: string;
  value: Record<string, unknown>;
}

function jsonValue(value: Record<string, unknown>): unknown {
  if ("stringValue" in value) return value.stringValue;
  if ("boolValue" in value) return value.boolValue;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return value.doubleValue;
  if ("arrayValue" in value) {
    return ((value.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(jsonValue);
  }
  return undefined;
}

const jsonAttributes = (list: JsonKeyValue[] | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));

function decodeJson(body: string): ReceivedSpan[] {
  const request = JSON.parse(body) as {
    resourceSpans?: {
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans?: { spans?: Record<string, unknown>[] }[];
    }[];
  };
  const spans: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: String(s.traceId ?? ""),
          spanId: String(s.spanId ?? ""),
          parentSpanId: String(s.parentSpanId ?? ""),
          name: String(s.name),
          kind: Number(s.kind ?? 0),
          attributes: jsonAttributes(s.attributes as JsonKeyValue[]),
          statusCode: Number((s.status as { code?: number } | undefined)?.code ?? 0),
          links: ((s.links as { traceId: string; spanId: string }[] | undefined) ?? []).map((l) => ({
            traceId: l.traceId,
            spanId: l.spanId,
          })),
          resource,
        });
      }
    }
  }
  return spans;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts the receiver; the caller closes it. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const waiters = new Set<() => void>();
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    if (request.method === "GET" && request.url === "/spans") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(spans));
      return;
    }
    if (request.method !== "POST" || request.url !== "/v1/traces") {
      response.writeHead(404).end();
      return;
    }
    const type = request.headers["content-type"] ?? "";
    contentTypes.push(type);
    try {
      spans.push(...(type.startsWith("application/json") ? decodeJson(body.toString("utf8")) : decodeProtobuf(body)));
    } catch (error) {
      response.writeHead(400).end(String(error));
      return;
    }
    response.writeHead(200, { "content-type": type.startsWith("application/json") ? "application/json" : type });
    response.end(type.startsWith("application/json") ? "{}" : undefined);
    for (const wake of waiters) wake();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    waitFor(predicate, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(spans)) return;
          cleanup();
          resolve(spans);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(
              `OTLP receiver: condition not met within ${timeoutMs} ms; spans: ${spans.map((s) => s.name).join(", ")}`,
            ),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
