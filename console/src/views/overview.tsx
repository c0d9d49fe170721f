/**
 * Overview: the last hour at a glance, from the public API only: events per source, per type
 * and over time (`GET /events?from=…`, following cursors up to a bound), and failed or dead
 * deliveries per destination (`GET /destinations/{id}/deliveries?state=…&from=…`).
 */
import { useEffect, useState } from "preact/hooks";
import { callApi, describeError, queryString } from "../api.ts";
import { type Bar, BarChart, TimeChart } from "../components/bar-chart.tsx";
import { NoEvents } from "../components/empty-state.tsx";
import type { Delivery, Destination, EventPage } from "../types.ts";

const HOUR = 3_600_000;
const BUCKETS = 12;
const MAX_PAGES = 20;

interface Summary {
  total: number;
  truncated: boolean;
  bySource: Bar[];
  byType: Bar[];
  overTime: number[];
  failures?: Bar[];
  failuresError?: string;
}

function toBars(counts: Map<string, number>): Bar[] {
  return [...counts].map(([label, value]) => ({ label, value })).sort((a, b) => b.value - a.value);
}

async function summarize(now: number): Promise<Summary> {
  const from = new Date(now - HOUR).toISOString();
  const bySource = new Map<string, number>();
  const byType = new Map<string, number>();
  const overTime = new Array<number>(BUCKETS).fill(0);
  let cursor: string | null | undefined;
  let total = 0;
  let pages = 0;
  do {
    const page = await callApi<EventPage>(`/events${queryString({ from, limit: 500, cursor })}`);
    for (const { event } of page.events) {
      total++;
      const source = event.source.replace(/^\/webhooks\//, "");
      bySource.set(source, (bySource.get(source) ?? 0) + 1);
      byType.set(event.type, (byType.get(event.type) ?? 0) + 1);
      const at = Date.parse(event.receivedtime ?? event.time);
      const bucket = Math.floor(((at - (now - HOUR)) / HOUR) * BUCKETS);
      if (bucket >= 0 && bucket < BUCKETS) overTime[bucket] = (overTime[bucket] ?? 0) + 1;
    }
    cursor = page.next_cursor;
  } while (cursor && ++pages < MAX_PAGES);
  const summary: Summary = {
    total,
    truncated: Boolean(cursor),
    bySource: toBars(bySource),
    byType: toBars(byType),
    overTime,
  };
  try {
    const { destinations } = await callApi<{ destinations: Destination[] }>("/destinations");
    const failures = new Map<string, number>();
    for (const d of destinations) {
      const answer = await callApi<{ deliveries: Delivery[] }>(
        `/destinations/${encodeURIComponent(d.id)}/deliveries${queryString({ state: "failed-retrying,dead", from, limit: 1000 })}`,
      );
      failures.set(d.id, answer.deliveries.length);
    }
    summary.failures = toBars(failures);
  } catch (error) {
    summary.failuresError = describeError(error);
  }
  return summary;
}

export function OverviewView() {
  const [summary, setSummary] = useState<Summary | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [refreshed, setRefreshed] = useState(0);
  useEffect(() => {
    summarize(Date.now()).then(setSummary, (failure) => setError(describeError(failure)));
  }, [refreshed]);
  return (
    <main id="main">
      <h1>Overview</h1>
      <p>
        The last hour.{" "}
        <button type="button" onClick={() => setRefreshed((n) => n + 1)}>
          Refresh
        </button>
      </p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!summary && !error && <p role="status">Loading…</p>}
      {summary && (
        <>
          <p role="status" data-total={summary.total}>
            {summary.truncated ? "More than " : ""}
            {summary.total} event{summary.total === 1 ? "" : "s"} received in the last hour.
          </p>
          {summary.total === 0 && <NoEvents title="No events in the last hour." />}
          <div class="charts">
            <TimeChart title="Events per 5 minutes" buckets={summary.overTime} minutesPerBucket={60 / BUCKETS} />
            <BarChart title="Events per source" bars={summary.bySource} />
            <BarChart title="Events per type" bars={summary.byType} />
            {summary.failures && (
              <BarChart title="Failed or dead deliveries per destination" bars={summary.failures} tone="danger" />
            )}
            {summary.failuresError && <p class="hint">Deliveries: {summary.failuresError}</p>}
          </div>
        </>
      )}
    </main>
  );
}
