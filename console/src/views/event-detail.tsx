/**
 * One event (`GET /events/{id}`): the CloudEvent, the raw body exactly as received with a copy
 * button, the received headers (credentials redacted by the gateway), marks, and every delivery
 * with every attempt; replay to one destination or to all (`POST /events/{id}/replay`).
 */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { callApi, describeError } from "../api.ts";
import { decodeBase64, formatTime, prettyJson, utf8Text } from "../components/format.ts";
import type { Delivery, Destination, EventDetail as Detail } from "../types.ts";
import { TransformTest } from "./transform-test.tsx";

const POLLS = 20;

function attemptCount(detail: Detail | undefined): number {
  return detail?.deliveries.reduce((sum, d) => sum + d.attempts.length, 0) ?? 0;
}

/** A scrolling box that keyboard users can focus and scroll (axe: scrollable-region-focusable). */
function ScrollBox(props: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable to scroll by keyboard
    <section class="scroll-box" aria-label={props.label} tabIndex={0}>
      {props.children}
    </section>
  );
}

function RawBody(props: { base64: string }) {
  const bytes = decodeBase64(props.base64);
  const text = utf8Text(bytes);
  const [copied, setCopied] = useState<string | undefined>();
  const shown = text ?? props.base64;
  return (
    <section aria-labelledby="raw-title">
      <div class="section-head">
        <h3 id="raw-title">Raw body {text === undefined ? "(not UTF-8: base64)" : `(${bytes.length} bytes)`}</h3>
        <button
          type="button"
          onClick={() =>
            navigator.clipboard.writeText(shown).then(
              () => setCopied("Copied"),
              () => setCopied("Copy failed: select the text instead"),
            )
          }
        >
          Copy raw body
        </button>
        <span role="status">{copied}</span>
      </div>
      <ScrollBox label="Raw body">
        <pre class="code" data-testid="raw-body">
          {shown}
        </pre>
      </ScrollBox>
    </section>
  );
}

function DeliveryTable(props: { delivery: Delivery }) {
  const d = props.delivery;
  return (
    <section class="delivery" data-destination={d.destination} aria-label={`Delivery to ${d.destination}`}>
      <h4>
        {d.destination}: <span class={`state state-${d.state}`}>{d.state}</span>
        {d.next_attempt_at && <span class="hint"> next attempt {formatTime(d.next_attempt_at)}</span>}
      </h4>
      {d.last_error && <p class="error-text">Last error: {d.last_error}</p>}
      <div class="table-wrap">
        <table class="cards" aria-label={`Attempts to ${d.destination}`}>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Time</th>
              <th scope="col">Result</th>
              <th scope="col">Status</th>
              <th scope="col">Latency</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {d.attempts.map((a, i) => (
              <tr key={a.at + String(i)} class="attempt">
                <td data-label="#">{i + 1}</td>
                <td data-label="Time">{formatTime(a.at)}</td>
                <td data-label="Result">{a.ok ? "ok" : "failed"}</td>
                <td data-label="Status">{a.status ?? "—"}</td>
                <td data-label="Latency">{a.latency_ms} ms</td>
                <td data-label="Error">
                  {a.skipped ? "skipped by the transform" : (a.error ?? "—")}
                  {a.transform && <span class="hint"> (transform {a.transform})</span>}
                  {a.logs && a.logs.length > 0 && (
                    <details>
                      <summary>Transform log ({a.logs.length} lines)</summary>
                      <pre class="code">{a.logs.join("\n")}</pre>
                    </details>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {d.attempts.length === 0 && <p class="hint">No attempt yet.</p>}
    </section>
  );
}

function ReplayForm(props: { detail: Detail; onReplayed(before: number): void }) {
  const [destinations, setDestinations] = useState<string[]>([]);
  const [target, setTarget] = useState("");
  const [message, setMessage] = useState<string | undefined>();
  useEffect(() => {
    const fromDeliveries = props.detail.deliveries.map((d) => d.destination);
    callApi<{ destinations: Destination[] }>("/destinations").then(
      (answer) => setDestinations([...new Set([...fromDeliveries, ...answer.destinations.map((d) => d.id)])]),
      () => setDestinations([...new Set(fromDeliveries)]),
    );
  }, [props.detail]);
  const replay = async () => {
    setMessage("Replaying…");
    const before = attemptCount(props.detail);
    try {
      const answer = await callApi<{ deliveries: Delivery[] }>(`/events/${props.detail.id}/replay`, {
        method: "POST",
        body: target ? { destination: target } : {},
      });
      setMessage(`Replay queued for ${answer.deliveries.map((d) => d.destination).join(", ") || "no destination"}.`);
      props.onReplayed(before);
    } catch (error) {
      setMessage(describeError(error));
    }
  };
  return (
    <form
      class="inline-form"
      aria-label="Replay this event"
      onSubmit={(event) => {
        event.preventDefault();
        void replay();
      }}
    >
      <label>
        Replay to{" "}
        <select value={target} onChange={(event) => setTarget(event.currentTarget.value)}>
          <option value="">all destinations</option>
          {destinations.map((id) => (
            <option key={id} value={id}>
              {id}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">Replay</button>
      <span role="status">{message}</span>
    </form>
  );
}

export function EventDetail(props: { id: string }) {
  const [detail, setDetail] = useState<Detail | undefined>();
  const [error, setError] = useState<string | undefined>();
  const load = useCallback(
    () =>
      callApi<Detail>(`/events/${encodeURIComponent(props.id)}`).then(
        (answer) => {
          setDetail(answer);
          setError(undefined);
          return answer;
        },
        (failure) => {
          setError(describeError(failure));
          return undefined;
        },
      ),
    [props.id],
  );
  useEffect(() => {
    setDetail(undefined);
    void load();
  }, [load]);

  // After a replay, refresh until a new attempt shows (bounded: POLLS times, once a second).
  const followReplay = (before: number) => {
    let polls = 0;
    const tick = async () => {
      const fresh = await load();
      if (attemptCount(fresh) > before || ++polls >= POLLS) return;
      setTimeout(tick, 1000);
    };
    void tick();
  };

  if (error)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  if (!detail) return <p role="status">Loading event…</p>;
  return (
    <article class="event-detail" aria-labelledby="event-title" data-id={detail.id}>
      <h2 id="event-title">
        {detail.event.type} <code>{detail.id}</code>
      </h2>
      <dl class="facts">
        <dt>Source</dt>
        <dd>{detail.source_id}</dd>
        <dt>Subject</dt>
        <dd>{detail.event.subject ?? "—"}</dd>
        <dt>Received</dt>
        <dd>{formatTime(detail.received_at)}</dd>
        <dt>Marks</dt>
        <dd>{detail.marks.length ? detail.marks.join(", ") : "none"}</dd>
      </dl>
      <section aria-labelledby="deliveries-title">
        <h3 id="deliveries-title">Deliveries</h3>
        <ReplayForm detail={detail} onReplayed={followReplay} />
        {detail.deliveries.length === 0 && <p class="hint">No delivery: no route sends this event anywhere.</p>}
        {detail.deliveries.map((d) => (
          <DeliveryTable key={d.destination} delivery={d} />
        ))}
      </section>
      <TransformTest detail={detail} />
      <RawBody base64={detail.raw_body_base64} />
      <section aria-labelledby="headers-title">
        <h3 id="headers-title">Received headers</h3>
        <div class="table-wrap">
          <table aria-labelledby="headers-title">
            <tbody>
              {Object.entries(detail.headers).map(([name, value]) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td>{value}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section aria-labelledby="cloudevent-title">
        <h3 id="cloudevent-title">CloudEvent</h3>
        <ScrollBox label="CloudEvent JSON">
          <pre class="code">{prettyJson(detail.event)}</pre>
        </ScrollBox>
      </section>
    </article>
  );
}
