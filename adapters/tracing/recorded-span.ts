/**
 * A span as the SDK's batch processor and the OTLP encoders read it (`ReadableSpan`), recorded with
 * the same values the SDK's own span records for the few operations of the tracing port: start in
 * whole milliseconds of `Date.now()`, end = start + the `performance.now()` delta, at most 128
 * attributes, array values copied, links as `{ context }`. The SDK's span also keeps its span
 * limits, events, metrics callbacks and diagnostics per span, which the port never uses and which
 * made a third of the tracing cost of a webhook (docs/tracing.md "Cost").
 */
import {
  type Attributes,
  type AttributeValue,
  diag,
  type HrTime,
  type Link,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  SpanStatusCode,
} from "@opentelemetry/api";
import {
  addHrTimes,
  hrTimeDuration,
  type InstrumentationScope,
  isAttributeValue,
  millisToHrTime,
} from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace";

// The SDK's default span limit (TracerProvider's spanLimits.attributeCountLimit).
const ATTRIBUTE_COUNT_LIMIT = 128;
const NO_EVENTS = Object.freeze([]) as unknown as TimedEvent[];
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
const NOT_ENDED: HrTime = Object.freeze([0, 0]) as unknown as HrTime;
const NO_DURATION: HrTime = Object.freeze([-1, -1]) as unknown as HrTime;

/** What every span of one tracer shares. */
export interface SpanSink {
  resource: Resource;
  instrumentationScope: InstrumentationScope;
  /** The batch span processor's `onEnd`. */
  onEnd(span: ReadableSpan): void;
}

/**
 * A sampled (or recorded) span; see the module comment. Finished spans wait in the batch queue
 * (up to `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`) long enough to be promoted by the garbage collector, so
 * a span keeps its times as two numbers and builds the `HrTime` pairs only when the exporter reads
 * them (the same values: the same conversions from the same numbers).
 */
export class RecordedSpan implements ReadableSpan {
  readonly attributes: Attributes = {};
  readonly events = NO_EVENTS;
  status: SpanStatus = UNSET;
  ended = false;
  droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
  private attributeCount = 0;
  private readonly startedAt = performance.now();
  private readonly startMillis = Date.now();
  private elapsedMillis = 0;

  constructor(
    readonly name: string,
    readonly kind: SpanKind,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    readonly links: Link[],
    private readonly sink: SpanSink,
  ) {
    this.resource = sink.resource;
    this.instrumentationScope = sink.instrumentationScope;
  }

  get startTime(): HrTime {
    return millisToHrTime(this.startMillis);
  }

  get endTime(): HrTime {
    return this.ended ? addHrTimes(this.startTime, millisToHrTime(this.elapsedMillis)) : NOT_ENDED;
  }

  get duration(): HrTime {
    return this.ended ? hrTimeDuration(this.startTime, this.endTime) : NO_DURATION;
  }

  spanContext(): SpanContext {
    return this.context;
  }

  setAttribute(key: string, value: AttributeValue): void {
    if (this.ended || value == null) return;
    if (key.length === 0 || !isAttributeValue(value)) {
      diag.warn(`Invalid attribute set for key: ${key}`);
      return;
    }
    const isNew = !Object.hasOwn(this.attributes, key);
    if (isNew && this.attributeCount >= ATTRIBUTE_COUNT_LIMIT) {
      this.droppedAttributesCount++;
      return;
    }
    this.attributes[key] = Array.isArray(value) ? value.slice() : value;
    if (isNew) this.attributeCount++;
  }

  setError(message: string): void {
    if (!this.ended) this.status = { code: SpanStatusCode.ERROR, message };
  }

  end(): void {
    if (this.ended) {
      diag.error(
        `${this.name} ${this.context.traceId}-${this.context.spanId} - You can only call end() on a span once.`,
      );
      return;
    }
    this.elapsedMillis = performance.now() - this.startedAt;
    this.ended = true;
    this.sink.onEnd(this);
  }
}
