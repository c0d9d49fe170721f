/**
 * Global setup of the workerd suite (vitest.workers.config.ts): before the Workers runtime
 * starts, starts on random loopback ports the HTTP sink receiver (http destinations, queue
 * consumer, and `GET /stats` with the fake's counters) and the e-sign emulator (the proxy's
 * upstream) and an OTLP/HTTP receiver (the Worker's traces), provides their addresses for the
 * Worker's bindings, and stops them at the end.
 */
import type { TestProject } from "vitest/node";
import { startEsignEmulator } from "./emulators.ts";
import { startSinkReceiver } from "./http-sink-receiver.ts";
import { startOtlpReceiver } from "./otlp-receiver.ts";

declare module "vitest" {
  export interface ProvidedContext {
    sinkUrl: string;
    esignBaseUrl: string;
    esignClientId: string;
    esignClientSecret: string;
    otlpUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const esign = await startEsignEmulator({
    tokenLimitPerIp: 1000,
    tokenLimitPerClient: 1000,
    generalLimitPerClient: 100_000,
  });
  const receiver = await startSinkReceiver(() => ({ esignTokenRequests: esign.tokenRequests() }));
  project.provide("sinkUrl", receiver.url);
  project.provide("esignBaseUrl", esign.baseUrl);
  project.provide("esignClientId", esign.client.clientId);
  project.provide("esignClientSecret", esign.client.clientSecret);
  // Every span the Worker and its objects export (test/workerd/tracing.test.ts).
  const otlp = await startOtlpReceiver();
  project.provide("otlpUrl", otlp.url);
  return async () => {
    await otlp.close();
    await receiver.close();
    await esign.close();
  };
}
