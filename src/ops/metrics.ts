/**
 * In-process metrics rendered in the Prometheus text exposition format. Labels carry only
 * source ids, reasons and outcomes: never secrets, bodies or identities.
 */

type Labels = Record<string, string>;

const LATENCY_BUCKETS_MS = [0.5, 1, 2, 5, 10, 20, 50, 100, 250, 500, 1000, 2500];

function formatLabels(labels: Labels): string {
  const parts = Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

// Formatting (sort + escape) costs more than the rest of a counter update; label sets repeat,
// so the formatted key is cached by the raw pairs. Bounded: label values are ids, types, reasons.
const formatted = new Map<string, string>();
const MAX_CACHED_LABEL_SETS = 10_000;

function labelKey(labels: Labels): string {
  let raw = "";
  for (const key in labels) raw += `${key}\u0000${labels[key]}\u0001`;
  let key = formatted.get(raw);
  if (key === undefined) {
    key = formatLabels(labels);
    if (formatted.size < MAX_CACHED_LABEL_SETS) formatted.set(raw, key);
  }
  return key;
}

interface Histogram {
  buckets: number[];
  sum: number;
  count: number;
}

export interface Metrics {
  inc(name: string, labels?: Labels, by?: number): void;
  observe(name: string, valueMs: number, labels?: Labels): void;
  render(): string;
}

/** Creates the registry; `help` documents each metric name once. */
export function createMetrics(
  help: Record<string, { type: "counter" | "histogram" | "gauge"; help: string }>,
): Metrics {
  const counters = new Map<string, Map<string, number>>();
  const histograms = new Map<string, Map<string, Histogram>>();
  return {
    inc(name, labels = {}, by = 1) {
      let series = counters.get(name);
      if (!series) {
        series = new Map();
        counters.set(name, series);
      }
      const key = labelKey(labels);
      series.set(key, (series.get(key) ?? 0) + by);
    },
    observe(name, valueMs, labels = {}) {
      let series = histograms.get(name);
      if (!series) {
        series = new Map();
        histograms.set(name, series);
      }
      const key = labelKey(labels);
      let h = series.get(key);
      if (!h) {
        h = { buckets: LATENCY_BUCKETS_MS.map(() => 0), sum: 0, count: 0 };
        series.set(key, h);
      }
      const seconds = valueMs / 1000;
      h.sum += seconds;
      h.count++;
      for (let i = 0; i < LATENCY_BUCKETS_MS.length; i++) {
        if (valueMs <= (LATENCY_BUCKETS_MS[i] as number)) h.buckets[i] = (h.buckets[i] as number) + 1;
      }
    },
    render() {
      const lines: string[] = [];
      for (const [name, meta] of Object.entries(help)) {
        lines.push(`# HELP ${name} ${meta.help}`, `# TYPE ${name} ${meta.type}`);
        if (meta.type === "histogram") {
          for (const [key, h] of histograms.get(name) ?? []) {
            const inner = key ? `${key.slice(1, -1)},` : "";
            LATENCY_BUCKETS_MS.forEach((le, i) => {
              lines.push(`${name}_bucket{${inner}le="${le / 1000}"} ${h.buckets[i]}`);
            });
            lines.push(`${name}_bucket{${inner}le="+Inf"} ${h.count}`);
            lines.push(`${name}_sum${key} ${h.sum}`, `${name}_count${key} ${h.count}`);
          }
        } else {
          for (const [key, value] of counters.get(name) ?? []) lines.push(`${name}${key} ${value}`);
        }
      }
      return `${lines.join("\n")}\n`;
    },
  };
}

/** The gateway's metric names. */
export const GATEWAY_METRICS = {
  gateway_webhooks_accepted_total: { type: "counter", help: "Webhooks verified and durably recorded." },
  gateway_webhooks_duplicate_total: { type: "counter", help: "Webhooks answered as duplicates." },
  gateway_webhooks_in_progress_total: { type: "counter", help: "Webhooks answered 409 in_progress." },
  gateway_webhooks_rejected_total: { type: "counter", help: "Webhooks rejected, by reason." },
  gateway_webhook_body_bytes_in_flight: {
    type: "gauge",
    help: "Bytes of webhook bodies received and not yet answered (bounded by ingress.maxBodyBytesInFlight).",
  },
  gateway_webhooks_budget_waits_total: {
    type: "counter",
    help: "Webhooks that waited for a read slot of an address over the failed-verification limit.",
  },
  gateway_webhook_verify_record_seconds: {
    type: "histogram",
    help: "Time from the raw body read to the durable record of an accepted webhook.",
  },
} as const;
