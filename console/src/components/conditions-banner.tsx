/**
 * The banner of active operational conditions (docs/data-lifecycle.md): a failing or disabled
 * destination, a spike of failed webhook verifications, a store that cannot record. It reads
 * `GET /conditions` every 15 s and shows nothing while all is well.
 */
import { useEffect, useState } from "preact/hooks";
import { callApi } from "../api.ts";
import { hrefOf } from "../router.ts";
import { formatTime } from "./format.ts";

interface Condition {
  type: string;
  subject: string;
  since: string;
  data: { destination?: string; source?: string; reason?: string; writes?: string };
}

const POLL_MS = 15_000;

function describe(c: Condition): string {
  switch (c.type) {
    case "gateway.destination.failing":
      return `Destination ${c.data.destination} is failing`;
    case "gateway.destination.disabled":
      return `Destination ${c.data.destination} is disabled${c.data.reason ? ` (${c.data.reason})` : ""}`;
    case "gateway.ingress.verification_failures":
      return `Many webhooks of source ${c.data.source} fail verification (a rotated secret, or forged traffic)`;
    case "gateway.store.unwritable":
      return "The store cannot record: webhooks are answered 503 until it can";
    default:
      return c.type;
  }
}

/** Shows the conditions that hold now; hidden when there are none or the key may not read them. */
export function ConditionsBanner() {
  const [conditions, setConditions] = useState<Condition[]>([]);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = () => {
      callApi<{ conditions: Condition[] }>("/conditions").then(
        (answer) => {
          if (stopped) return;
          setConditions(answer.conditions);
          timer = setTimeout(poll, POLL_MS);
        },
        // A key without access to the event log: no banner, and no further requests.
        () => !stopped && setConditions([]),
      );
    };
    poll();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, []);
  if (conditions.length === 0) return null;
  return (
    <section class="conditions" role="status" aria-label="Active conditions">
      <ul class="conditions-list">
        {conditions.map((c) => (
          <li key={`${c.type} ${c.subject}`}>
            <strong>{describe(c)}</strong> <span class="since">since {formatTime(c.since)}</span>
            {c.data.destination ? (
              <>
                {" "}
                <a href={hrefOf("/destinations")}>Destinations</a>
              </>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
