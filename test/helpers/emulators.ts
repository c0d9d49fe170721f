/**
 * The upstream emulators (emulators/) served on random loopback ports for the tests: one
 * implementation of both upstream APIs, used by the proxy tests and the emulator suite. Each
 * helper returns the emulator plus what the tests inspect: the request log, fault injection,
 * token counts, document hashes and the upload/download hooks.
 */

import { serveApp } from "../../adapters/node/start-emulators.ts";
import {
  createEsignEmulator,
  type EsignEmulator,
  type EsignEmulatorOptions,
} from "../../emulators/esign/esign-emulator.ts";
import type { FaultRule, SeenRequest } from "../../emulators/shared/request-log.ts";
import {
  createStaffingEmulator,
  type StaffingEmulator,
  type StaffingEmulatorOptions,
} from "../../emulators/staffing/staffing-emulator.ts";

interface Served {
  url: string;
  /** The API root clients append paths to (`{url}/api/public/v1`). */
  baseUrl: string;
  seen: SeenRequest[];
  count(method: string, path: string | RegExp): number;
  inject(rule: FaultRule): void;
  close(): Promise<void>;
}

export interface EsignServer extends Served {
  emulator: EsignEmulator;
  client: EsignEmulator["client"];
  tokenRequests(): number;
  issued: string[];
  revokeAll(): void;
  createAgreement(title?: string, externalId?: string | null): Promise<string>;
  documentHashes: { get(id: string): Promise<string | undefined> };
  uploadHeaders: Record<string, string>[];
  holdUploads(): () => void;
  downloadSent(): number;
}

export interface StaffingServer extends Served {
  emulator: StaffingEmulator;
  apiKey: string;
}

/** The e-sign emulator on a random loopback port (simulated activity driven by `advance`). */
export async function startEsignEmulator(options: EsignEmulatorOptions = {}): Promise<EsignServer> {
  const emulator = createEsignEmulator(options);
  const served = await serveApp(emulator.app);
  return {
    emulator,
    url: served.url,
    baseUrl: `${served.url}${emulator.apiPath}`,
    seen: emulator.log.seen,
    count: emulator.log.count,
    inject: emulator.log.inject,
    client: emulator.client,
    tokenRequests: emulator.tokenRequests,
    issued: emulator.issued,
    revokeAll: emulator.revokeAll,
    createAgreement: emulator.createAgreement,
    documentHashes: { get: emulator.documentSha256 },
    uploadHeaders: emulator.uploadHeaders,
    holdUploads: emulator.holdUploads,
    downloadSent: emulator.downloadSent,
    async close() {
      emulator.close();
      await served.close();
    },
  };
}

/** The staffing emulator on a random loopback port. */
export async function startStaffingEmulator(options: StaffingEmulatorOptions = {}): Promise<StaffingServer> {
  const emulator = createStaffingEmulator(options);
  const served = await serveApp(emulator.app);
  return {
    emulator,
    url: served.url,
    baseUrl: `${served.url}${emulator.apiPath}`,
    seen: emulator.log.seen,
    count: emulator.log.count,
    inject: emulator.log.inject,
    apiKey: emulator.apiKey,
    async close() {
      emulator.close();
      await served.close();
    },
  };
}
