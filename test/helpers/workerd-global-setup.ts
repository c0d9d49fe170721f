/**
 * Global setup of the workerd suite (vitest.workers.config.ts): starts the HTTP sink receiver
 * on a random loopback port before the Workers runtime starts, provides its URL (the Worker's
 * `TEST_SINK_URL` binding), and stops it at the end.
 */
import type { TestProject } from "vitest/node";
import { startSinkReceiver } from "./http-sink-receiver.ts";

declare module "vitest" {
  export interface ProvidedContext {
    sinkUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const receiver = await startSinkReceiver();
  project.provide("sinkUrl", receiver.url);
  return () => receiver.close();
}
