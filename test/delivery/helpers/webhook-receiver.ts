/**
 * A real HTTP server on a random loopback port standing in for a webhook consumer: it records
 * every request (headers and raw body) and answers as the test scripts it (status, headers, or
 * holding the answer back). `waitFor` polls an observable condition with a bounded deadline.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  n: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The exact bytes of the body. */
  raw: Buffer;
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Answer only once this resolves (a slow or hanging consumer). */
  after?: Promise<unknown>;
}

export type Responder = (request: ReceivedRequest) => Answer;

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Replaces how the receiver answers from now on. */
  respond(responder: Responder): void;
  /** Event ids (webhook-id) received, in order. */
  ids(): string[];
  close(): Promise<void>;
}

/** Starts a receiver answering 200 until told otherwise (on `port`, default any free one). */
export async function startWebhookReceiver(
  responder: Responder = () => ({ status: 200 }),
  port = 0,
): Promise<WebhookReceiver> {
  let answer = responder;
  const requests: ReceivedRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) headers[name] = String(value);
      const request: ReceivedRequest = {
        n: requests.length + 1,
        method: req.method ?? "",
        path: req.url ?? "",
        headers,
        body: Buffer.concat(chunks).toString("utf8"),
        raw: Buffer.concat(chunks),
        at: Date.now(),
      };
      requests.push(request);
      const planned = answer(request);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(planned.status, planned.headers);
        res.end();
      };
      if (planned.after) planned.after.then(send, send);
      else send();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/hook`,
    requests,
    respond(next) {
      answer = next;
    },
    ids: () => requests.map((r) => r.headers["webhook-id"] as string),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `condition` every 10 ms until it holds; fails after `timeoutMs` with `what`. */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** `waitFor` with room for a loaded machine (2 cores shared by many processes): 90 s by default. */
export function waitLong(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 90_000) {
  return waitFor(what, condition, timeoutMs);
}
