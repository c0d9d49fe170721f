/**
 * Realistic signed webhooks of both schemes with unique ids, generated on the fly for load
 * tests: the services' sample bodies (src/services/{esign,staffing}/*-samples.ts) with a
 * per-request unique id, signed with node:crypto exactly as the upstreams sign (a few
 * microseconds each, off the measured server's core).
 */
import { createHmac } from "node:crypto";
import { buildEsignBody } from "../../src/services/esign/esign-samples.ts";
import { buildStaffingBody } from "../../src/services/staffing/staffing-samples.ts";
import type { LoadRequest } from "./autocannon-run.ts";

/** Where a template takes its unique id. */
export const WEBHOOK_MARK = "__UNIQUE__";

export interface WebhookSecrets {
  esign: string;
  staffing: string;
}

/** Returns a generator of signed deliveries alternating e-sign and staffing. */
/** The e-sign template (`WEBHOOK_MARK` for the unique id) made unique and signed as the upstream signs it. */
export function signedEsignWebhook(secret: string, template: string, unique: string): LoadRequest {
  const body = template.replaceAll(WEBHOOK_MARK, unique);
  const mac = createHmac("sha256", secret).update(body).digest("hex");
  return {
    method: "POST",
    path: "/webhooks/esign",
    headers: {
      "content-type": "application/json",
      "x-svc-event": "agreement.signed",
      "x-svc-delivery": `dlv-${unique}`,
      "x-svc-signature": `sha256=${mac}`,
    },
    body,
  };
}

export function createWebhookGenerator(secrets: WebhookSecrets, runId: string): () => LoadRequest {
  const esignTemplate = JSON.stringify(buildEsignBody("agreement.signed", { uniqueId: WEBHOOK_MARK }));
  const staffingTemplate = JSON.stringify(buildStaffingBody("candidate.responded", { uniqueId: WEBHOOK_MARK }));
  let n = 0;
  return (): LoadRequest => {
    const unique = `${runId}-${n++}`;
    if (n % 2 === 0) return signedEsignWebhook(secrets.esign, esignTemplate, unique);
    const body = staffingTemplate;
    const t = Math.floor(Date.now() / 1000);
    const mac = createHmac("sha256", secrets.staffing).update(`${t}.${body}`).digest("hex");
    return {
      method: "POST",
      path: "/webhooks/staffing",
      headers: {
        "content-type": "application/json",
        "x-svc-signature": `t=${t},v1=${mac}`,
        "x-svc-timestamp": String(t),
        "x-svc-delivery-id": `del-${unique}`,
      },
      body,
    };
  };
}
