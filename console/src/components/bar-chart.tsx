/**
 * A small SVG bar chart: horizontal bars with their labels and values, drawn with SVG attributes
 * only (no inline styles, which the console's Content-Security-Policy forbids). The figure has a
 * text alternative and the numbers are in the markup, so the chart reads without sight.
 */

export interface Bar {
  label: string;
  value: number;
}

const ROW = 26;
const LABEL_WIDTH = 170;
const WIDTH = 520;

export function BarChart(props: { title: string; bars: Bar[]; tone?: "accent" | "danger" }) {
  const max = Math.max(1, ...props.bars.map((b) => b.value));
  const height = Math.max(1, props.bars.length) * ROW + 4;
  const summary = props.bars.map((b) => `${b.label}: ${b.value}`).join(", ") || "no data";
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      {props.bars.length === 0 ? (
        <p class="hint">Nothing in the last hour.</p>
      ) : (
        <svg
          viewBox={`0 0 ${WIDTH} ${height}`}
          role="img"
          aria-label={`${props.title}: ${summary}`}
          class={`bars bars-${props.tone ?? "accent"}`}
        >
          {props.bars.map((bar, i) => {
            const y = i * ROW + 2;
            const length = Math.max(2, ((WIDTH - LABEL_WIDTH - 60) * bar.value) / max);
            return (
              <g key={bar.label}>
                <text x={LABEL_WIDTH - 8} y={y + ROW / 2 + 4} text-anchor="end" class="bar-label">
                  {bar.label.length > 24 ? `${bar.label.slice(0, 23)}…` : bar.label}
                </text>
                <rect x={LABEL_WIDTH} y={y + 3} width={length} height={ROW - 8} rx={3} class="bar" />
                <text x={LABEL_WIDTH + length + 6} y={y + ROW / 2 + 4} class="bar-value">
                  {bar.value}
                </text>
              </g>
            );
          })}
        </svg>
      )}
    </figure>
  );
}

/** Columns over time: one bar per bucket (oldest left), with a text alternative. */
export function TimeChart(props: { title: string; buckets: number[]; minutesPerBucket: number }) {
  const max = Math.max(1, ...props.buckets);
  const height = 120;
  const step = WIDTH / props.buckets.length;
  const summary = props.buckets
    .map((n, i) => `${(props.buckets.length - i) * props.minutesPerBucket} min ago: ${n}`)
    .join(", ");
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${height + 20}`} role="img" aria-label={`${props.title}: ${summary}`} class="bars">
        {props.buckets.map((n, i) => {
          const h = n === 0 ? 0 : Math.max(2, (height * n) / max);
          return (
            <g key={i}>
              <rect x={i * step + 2} y={height - h} width={step - 4} height={h} rx={2} class="bar" />
              {n > 0 && (
                <text x={i * step + step / 2} y={height - h - 3} text-anchor="middle" class="bar-value">
                  {n}
                </text>
              )}
            </g>
          );
        })}
        <text x={0} y={height + 16} class="bar-label">
          −{props.buckets.length * props.minutesPerBucket} min
        </text>
        <text x={WIDTH} y={height + 16} text-anchor="end" class="bar-label">
          now
        </text>
      </svg>
    </figure>
  );
}
