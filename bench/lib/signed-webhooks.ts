/**
 * Realistic signed webhooks of both schemes with unique ids, generated on the fly for load
 * tests: the sample bodies of src/samples with a per-request unique id, signed with node:crypto
 * exactly as the upstreams sign (a few microseconds each, off the measured server's core).
 */
import { createHmac } from "node:crypto";
import { buildEsignBody } from "../../src/services/esign/esign-samples.ts";
import { buildStaffingBody } from "../../src/services/staffing/staffing-samples.ts";
import type { LoadRequest } from "./autocannon-run.ts";

const MARK = "__UNIQUE__";

export interface WebhookSecrets {
  esign: string;
  staffing: string;
}

/** Returns a generator of signed deliveries alternating e-sign and staffing. */
export function createWebhookGenerator(secrets: WebhookSecrets, runId: string): () => LoadRequest {
  const esignTemplate = JSON.stringify(buildEsignBody("agreement.signed", { uniqueId: MARK }));
  const staffingTemplate = JSON.stringify(buildStaffingBody("candidate.responded", { uniqueId: MARK }));
  let n = 0;
  return (): LoadRequest => {
    const unique = `${runId}-${n++}`;
    if (n % 2 === 0) {
      const body = esignTemplate.replaceAll(MARK, unique);
      const mac = createHmac("sha256", secrets.esign).update(body).digest("hex");
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
