/**
 * Send a test event (development and sandbox setups only): any documented event type of either
 * service, built, signed and verified by the gateway itself (`POST /sources/{id}/test-events`).
 */
import { useEffect, useState } from "preact/hooks";
import { callApi, describeError } from "../api.ts";
import { Link } from "../components/link.tsx";
import { hasFeature } from "../features.ts";
import { hrefOf } from "../router.ts";
import type { TestEventSource } from "../types.ts";

interface Sent {
  status: number;
  answer: { id?: string; duplicate?: boolean };
  type: string;
  source: string;
}

export function SendTestEventView() {
  if (!hasFeature("test-events")) {
    return (
      <main id="main">
        <h1>Send a test event</h1>
        <p class="empty-state" data-empty="test-events">
          Test events are off on this gateway. Set <code>"testEvents": true</code> in its configuration (they are on
          with the zero-config <code>npm start</code>), or send a signed sample from a terminal:{" "}
          <code>npm run gateway -- trigger &lt;source&gt; &lt;event type&gt;</code>.
        </p>
      </main>
    );
  }
  return <SendTestEventForm />;
}

function SendTestEventForm() {
  const [sources, setSources] = useState<TestEventSource[] | undefined>();
  const [sourceId, setSourceId] = useState("");
  const [type, setType] = useState("");
  const [sent, setSent] = useState<Sent[]>([]);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    callApi<{ sources: TestEventSource[] }>("/test-events").then(
      (answer) => {
        setSources(answer.sources);
        setSourceId(answer.sources[0]?.id ?? "");
        setType(answer.sources[0]?.types[0] ?? "");
      },
      (failure) => setError(describeError(failure)),
    );
  }, []);
  const source = sources?.find((s) => s.id === sourceId);

  const send = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      const answer = await callApi<Sent>(`/sources/${encodeURIComponent(sourceId)}/test-events`, {
        method: "POST",
        body: { type },
      });
      setSent((list) => [answer, ...list].slice(0, 20));
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  return (
    <main id="main">
      <h1>Send a test event</h1>
      <p>
        The gateway builds the documented sample of the type, signs it with the source's secret and receives it like any
        webhook.
      </p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {sources && (
        <form class="filters" aria-label="Test event" onSubmit={send}>
          <label>
            Source{" "}
            <select
              name="source"
              value={sourceId}
              onChange={(e) => {
                const next = e.currentTarget.value;
                setSourceId(next);
                setType(sources.find((s) => s.id === next)?.types[0] ?? "");
              }}
            >
              {sources.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.id} ({s.service})
                </option>
              ))}
            </select>
          </label>
          <label>
            Event type{" "}
            <select name="type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
              {source?.types.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </label>
          <button type="submit">Send</button>
        </form>
      )}
      {sent.length > 0 && (
        <ul class="sent" aria-label="Sent test events">
          {sent.map((s) => (
            <li key={`${s.answer.id}-${s.status}`}>
              {s.source} {s.type}: {s.status}{" "}
              {s.answer.id && <Link href={hrefOf(`/events/${s.answer.id}`)}>{s.answer.id}</Link>}
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
