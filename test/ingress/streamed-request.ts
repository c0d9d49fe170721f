/**
 * A POST whose body the test writes piece by piece over a raw TCP connection, so the test
 * controls Content-Length, chunked framing and `Expect: 100-continue`, and still reads an answer
 * that the server sends before the body is complete. (Node's HTTP client reports EPIPE instead
 * of such an early answer when the server closes the connection right after it, as Node's
 * server does when it answers an unfinished request.)
 */
import { connect } from "node:net";

export interface StreamedAnswer {
  status: number;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  text: string;
}

export interface StreamedRequest {
  /** The answer, once complete (or once the server closed the connection after its head). */
  answer: Promise<StreamedAnswer>;
  /** Resolves when the server sent `100 Continue` (it parsed the request head and runs the handler). */
  continued: Promise<void>;
  /** Resolves once the server closed its side of the connection (FIN or reset). */
  closed: Promise<void>;
  /** True once the head of a final (non-1xx) answer arrived. */
  readonly answered: boolean;
  /** Writes one piece of the body (framed as a chunk unless a content-length header was given). */
  write(chunk: Uint8Array | string): Promise<void>;
  /** Writes the last piece and ends the body. */
  end(chunk?: Uint8Array | string): Promise<void>;
  destroy(): void;
}

/** Parses one HTTP/1.1 answer from `data`; undefined while incomplete (unless `final`). */
function parseAnswer(data: Buffer, final: boolean): StreamedAnswer | undefined {
  const headEnd = data.indexOf("\r\n\r\n");
  if (headEnd === -1) return undefined;
  const [statusLine = "", ...lines] = data.toString("latin1", 0, headEnd).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = data.subarray(headEnd + 4);
  if (headers["transfer-encoding"] === "chunked") {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = body.indexOf("\r\n");
      if (lineEnd === -1) return undefined;
      const size = Number.parseInt(body.toString("latin1", 0, lineEnd), 16);
      if (size === 0) break;
      if (body.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
      body = body.subarray(lineEnd + 2 + size + 2);
    }
    body = Buffer.concat(parts);
  } else if (headers["content-length"] !== undefined) {
    const length = Number(headers["content-length"]);
    if (body.length < length) return undefined;
    body = body.subarray(0, length);
  } else if (!final) {
    return undefined;
  }
  return { status: Number(statusLine.split(" ")[1]), headers, text: body.toString("utf8") };
}

/** Opens `POST url` with `headers`; without a content-length header the body is chunked. */
export function openStreamedRequest(
  url: string,
  headers: Record<string, string>,
  localAddress?: string,
): StreamedRequest {
  const target = new URL(url);
  const chunked = !Object.keys(headers).some((name) => name.toLowerCase() === "content-length");
  const socket = connect({ port: Number(target.port), host: target.hostname, localAddress });
  let received = Buffer.alloc(0);
  let answered = false;
  let onContinue: () => void = () => {};
  const continued = new Promise<void>((resolve) => {
    onContinue = resolve;
  });
  const answer = new Promise<StreamedAnswer>((resolve, reject) => {
    socket.on("data", (data: Buffer) => {
      received = Buffer.concat([received, data]);
      // Interim answers come first and end with an empty line.
      while (/^HTTP\/1\.1 1\d\d /.test(received.toString("latin1", 0, 13))) {
        const end = received.indexOf("\r\n\r\n");
        if (end === -1) return;
        received = received.subarray(end + 4);
        onContinue();
      }
      if (received.indexOf("\r\n\r\n") !== -1) answered = true;
      const parsed = parseAnswer(received, false);
      if (parsed) resolve(parsed);
    });
    // The server may reset the connection right after an early answer: what arrived counts.
    const settle = (error?: Error) => {
      const parsed = parseAnswer(received, true);
      if (parsed) resolve(parsed);
      else reject(error ?? new Error(`connection closed without a complete answer: ${received.toString("latin1")}`));
    };
    socket.on("error", settle);
    socket.on("close", () => settle());
  });
  const closed = new Promise<void>((resolve) => {
    socket.once("end", resolve);
    socket.once("close", () => resolve());
  });
  const head = [`POST ${target.pathname}${target.search} HTTP/1.1`, `Host: ${target.host}`];
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  if (chunked) head.push("Transfer-Encoding: chunked");
  socket.write(`${head.join("\r\n")}\r\n\r\n`);

  const send = (data: Uint8Array | string) =>
    new Promise<void>((resolve) => {
      if (socket.destroyed) return resolve();
      socket.write(data, () => resolve());
    });
  const frame = (chunk: Uint8Array | string) => {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk);
    if (!chunked) return bytes;
    return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]);
  };
  return {
    answer,
    continued,
    closed,
    get answered() {
      return answered;
    },
    write: (chunk) => send(frame(chunk)),
    async end(chunk) {
      if (chunk !== undefined && (typeof chunk === "string" ? chunk.length : chunk.byteLength) > 0) {
        await send(frame(chunk));
      }
      if (chunked) await send("0\r\n\r\n");
    },
    destroy() {
      socket.destroy();
    },
  };
}
