/**
 * The set-up of the `http` sink tests (test/drivers/sink/http.test.ts, the send thread's
 * test/delivery/http-send-thread.test.ts): one fresh signing secret, destinations parsed as a
 * config's are, real receivers on loopback closed after the file, sinks closed after each test,
 * and a loopback URL nothing listens on.
 */
import { createServer } from "node:net";
import * as v from "valibot";
import { afterAll, afterEach } from "vitest";
import { type HttpDestination, HttpDestinationSchema } from "../../../src/delivery/http/http-destination-schema.ts";
import type { Sink } from "../../../src/delivery/sink-contract.ts";
import { makeWhsecSecret } from "./in-process-gateway.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.ts";

export interface HttpSinkFixture {
  /** The `whsec_` secret every destination signs with. */
  secret: string;
  /** A receiver closed after the file's tests. */
  receiver(...args: Parameters<typeof startWebhookReceiver>): Promise<WebhookReceiver>;
  /** An `http` destination (id `hook`, the fixture's secret) with `input` on top, validated. */
  destination(input: Record<string, unknown>): HttpDestination;
  /** Closes `sink` after the current test; returns it. */
  keep(sink: Sink): Sink;
}

/** Registers the file's hooks (call at the top level of a test file). */
export function httpSinkFixture(): HttpSinkFixture {
  const secret = makeWhsecSecret();
  const receivers: WebhookReceiver[] = [];
  const sinks: Sink[] = [];
  afterEach(async () => {
    await Promise.all(sinks.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });
  return {
    secret,
    async receiver(...args) {
      const started = await startWebhookReceiver(...args);
      receivers.push(started);
      return started;
    },
    destination: (input) => v.parse(HttpDestinationSchema, { id: "hook", type: "http", secrets: [secret], ...input }),
    keep(sink) {
      sinks.push(sink);
      return sink;
    },
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
