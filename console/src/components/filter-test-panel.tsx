/**
 * "Test this filter against the last 100 events": sends the filter box's JSON to
 * `POST /filters/test` and shows how many of the recent events match and which (links to them).
 * Problems are shown with the path to the bad part, as the gateway names it.
 */
import { useState } from "preact/hooks";
import { ApiError, callApi, describeError } from "../api.ts";
import { hrefOf } from "../router.ts";
import { Link } from "./link.tsx";

interface TestAnswer {
  tested: number;
  matched: number;
  events: { id: string; type: string; subject: string | null; time: string }[];
}

/** The filter box's text as a filter object, or a message saying why it is not one. */
export function readFilterText(text: string): { filter?: unknown; problem?: string } {
  if (text.trim() === "") return {};
  try {
    return { filter: JSON.parse(text) };
  } catch {
    return { problem: 'The filter is not JSON, e.g. {"data":{"status":"completed"}}' };
  }
}

function problemOf(error: unknown): string {
  if (error instanceof ApiError && Array.isArray(error.details)) {
    const parts = (error.details as { field?: string; message?: string }[]).map((d) => `${d.field}: ${d.message}`);
    if (parts.length > 0) return `Invalid filter: ${parts.join("; ")}`;
  }
  return describeError(error);
}

export function FilterTestPanel(props: { text: string }) {
  const [answer, setAnswer] = useState<TestAnswer>();
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);

  const run = async () => {
    const read = readFilterText(props.text);
    setAnswer(undefined);
    setProblem(read.problem);
    if (read.problem) return;
    setBusy(true);
    try {
      setAnswer(await callApi<TestAnswer>("/filters/test", { method: "POST", body: { filter: read.filter } }));
    } catch (error) {
      setProblem(problemOf(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="filter-test" aria-label="Test the filter">
      <button type="button" onClick={run} disabled={busy}>
        Test against the last 100 events
      </button>
      {problem && (
        <p role="alert" class="error">
          {problem}
        </p>
      )}
      {answer && (
        <>
          <p role="status" class="filter-test-result">
            {answer.matched} of the last {answer.tested} events match
          </p>
          <ul class="filter-test-matches">
            {answer.events.map((event) => (
              <li key={event.id}>
                <Link href={hrefOf(`/events/${event.id}`)}>{event.id}</Link> {event.type}
                {event.subject ? ` ${event.subject}` : ""}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
