/**
 * "Run a destination's transform on this event" (docs/transformations.md): picks a destination
 * (its configured transform) or a built-in format, calls `POST /transforms/test` and shows the
 * payload it would deliver, a skip, or the error with the transform's console lines.
 */
import { useEffect, useState } from "preact/hooks";
import { callApi, describeError } from "../api.ts";
import { prettyJson } from "../components/format.ts";
import type { Destination, EventDetail, TransformTestAnswer } from "../types.ts";

const BUILTINS = ["slack", "teams", "discord"];

function Answer(props: { answer: TransformTestAnswer }) {
  const { answer } = props;
  return (
    <div class="transform-answer" data-testid="transform-answer">
      {answer.ok ? (
        <p role="status">
          {answer.skipped ? "Skipped: the transform returned null." : "The transform returned:"}{" "}
          <span class="hint">
            ({answer.version}, {answer.durationMs} ms)
          </span>
        </p>
      ) : (
        <p role="alert" class="error">
          transform_error: {answer.error.message}
        </p>
      )}
      {answer.ok && !answer.skipped && <pre class="code">{prettyJson(answer.result)}</pre>}
      {answer.logs.length > 0 && (
        <>
          <h4>Transform log</h4>
          <pre class="code">{answer.logs.join("\n")}</pre>
        </>
      )}
    </div>
  );
}

export function TransformTest(props: { detail: EventDetail }) {
  const [destinations, setDestinations] = useState<string[]>([]);
  const [choice, setChoice] = useState("");
  const [answer, setAnswer] = useState<TransformTestAnswer | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  useEffect(() => {
    const fromDeliveries = props.detail.deliveries.map((d) => d.destination);
    callApi<{ destinations: Destination[] }>("/destinations").then(
      (found) => setDestinations([...new Set([...fromDeliveries, ...found.destinations.map((d) => d.id)])]),
      () => setDestinations([...new Set(fromDeliveries)]),
    );
  }, [props.detail]);
  const options = [
    ...destinations.map((id) => ({ value: `destination:${id}`, label: `${id} (its transform)` })),
    ...BUILTINS.map((name) => ({ value: `builtin:${name}`, label: `built-in ${name}` })),
  ];
  const selected = choice || options[0]?.value || "";
  const run = async () => {
    const [kind, name] = selected.split(/:(.*)/s) as [string, string];
    setAnswer(undefined);
    setMessage("Running…");
    try {
      const body =
        kind === "builtin" ? { event: props.detail.id, builtin: name } : { event: props.detail.id, destination: name };
      setAnswer(await callApi<TransformTestAnswer>("/transforms/test", { method: "POST", body }));
      setMessage(undefined);
    } catch (error) {
      setMessage(describeError(error));
    }
  };
  return (
    <section aria-labelledby="transform-title">
      <h3 id="transform-title">Run a destination's transform on this event</h3>
      <form
        class="inline-form"
        aria-label="Run a transform on this event"
        onSubmit={(event) => {
          event.preventDefault();
          void run();
        }}
      >
        <label>
          Transform{" "}
          <select value={selected} onChange={(event) => setChoice(event.currentTarget.value)}>
            {options.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Run transform</button>
        <span role="status">{message}</span>
      </form>
      {answer && <Answer answer={answer} />}
      <p class="hint">Nothing is delivered; the event as recorded is used, without route enrichment.</p>
    </section>
  );
}
