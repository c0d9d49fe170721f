/**
 * Concurrent copies of one upstream event against a real process: exactly one is recorded and
 * acknowledged 202; every other copy is a 200 duplicate with the same id or a 409 in_progress
 * with `Retry-After: 1`; a later retry of any of them is a 200 duplicate.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import {
  esignDelivery,
  listAllEventIds,
  postWebhook,
  readAnswer,
  type SignedDelivery,
  staffingDelivery,
} from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "./gateway-fixtures.ts";

const COPIES = 50;
let gw: GatewayProcess;

beforeAll(async () => {
  gw = await startEditedGatewayProcess(() => {});
});
afterAll(async () => {
  await gw.kill();
});

async function fireTogether(source: string, delivery: SignedDelivery) {
  const answers = await Promise.all(
    Array.from({ length: COPIES }, async () => readAnswer(await postWebhook(gw.url, source, delivery))),
  );
  const accepted = answers.filter((a) => a.status === 202);
  expect(accepted).toHaveLength(1);
  const id = accepted[0]!.body.id as string;
  expect(accepted[0]!.body).toEqual({ id, duplicate: false });
  for (const answer of answers) {
    if (answer.status === 202) continue;
    if (answer.status === 200) {
      expect(answer.body).toEqual({ id, duplicate: true });
    } else {
      expect(answer.status).toBe(409);
      expect(answer.headers.get("retry-after")).toBe("1");
      expect(answer.body.error.code).toBe("in_progress");
    }
  }
  // A retry of any copy, once the race is over, is a duplicate of the one recorded event.
  const retry = await readAnswer(await postWebhook(gw.url, source, delivery));
  expect(retry).toMatchObject({ status: 200, body: { id, duplicate: true } });
  return id;
}

it(`records ${COPIES} identical e-sign deliveries fired at once exactly once`, async () => {
  const id = await fireTogether("esign", await esignDelivery(gw.secrets.esign, "agreement.completed"));
  expect(await listAllEventIds(gw.url, gw.secrets.adminKey, "source=esign")).toEqual([id]);
});

it(`records ${COPIES} identical staffing deliveries fired at once exactly once`, async () => {
  const id = await fireTogether("staffing", await staffingDelivery(gw.secrets.staffing, "candidate.responded"));
  expect(await listAllEventIds(gw.url, gw.secrets.adminKey, "source=staffing")).toEqual([id]);
});
