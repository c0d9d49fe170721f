/**
 * Destinations (`GET /destinations`): state, breaker, backlog, last error; pause and resume
 * (`POST /destinations/{id}/pause|resume`); bulk replay of dead letters in a time range
 * (`POST /destinations/{id}/replay`) after a confirmation that says how many deliveries it
 * will replay, counted first with `GET /destinations/{id}/deliveries`.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { callApi, describeError, queryString } from "../api.ts";
import { NoDestinations } from "../components/empty-state.tsx";
import { formatTime, localInputToIso } from "../components/format.ts";
import type { Delivery, Destination } from "../types.ts";

const COUNT_PAGES = 20;

/** Counts the dead letters of a destination in a range (bounded: COUNT_PAGES pages of 1000). */
async function countDeadLetters(id: string, from?: string, to?: string): Promise<{ count: number; more: boolean }> {
  let count = 0;
  let cursor: string | null | undefined;
  for (let page = 0; page < COUNT_PAGES; page++) {
    const answer = await callApi<{ deliveries: Delivery[]; next_cursor: string | null }>(
      `/destinations/${encodeURIComponent(id)}/deliveries${queryString({ state: "dead", from, to, limit: 1000, cursor })}`,
    );
    count += answer.deliveries.length;
    cursor = answer.next_cursor;
    if (!cursor) return { count, more: false };
  }
  return { count, more: true };
}

interface Plan {
  id: string;
  from?: string;
  to?: string;
  count: number;
  more: boolean;
}

function BulkReplay(props: { destinations: Destination[]; onDone(): void }) {
  const [plan, setPlan] = useState<Plan | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (plan) dialog.current?.showModal();
    else dialog.current?.close();
  }, [plan]);

  const prepare = async (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const id = String(data.get("destination") ?? "");
    const from = localInputToIso(String(data.get("from") ?? ""));
    const to = localInputToIso(String(data.get("to") ?? ""));
    setMessage("Counting dead letters…");
    try {
      const counted = await countDeadLetters(id, from, to);
      setMessage(undefined);
      setPlan({ id, from, to, ...counted });
    } catch (error) {
      setMessage(describeError(error));
    }
  };
  const confirm = async () => {
    if (!plan) return;
    const { id, from, to } = plan;
    setPlan(undefined);
    try {
      const answer = await callApi<{ replayed: number }>(`/destinations/${encodeURIComponent(id)}/replay`, {
        method: "POST",
        body: { states: ["dead"], ...(from ? { from } : {}), ...(to ? { to } : {}) },
      });
      setMessage(`Replaying ${answer.replayed} dead letter${answer.replayed === 1 ? "" : "s"} to ${id}.`);
      props.onDone();
    } catch (error) {
      setMessage(describeError(error));
    }
  };

  return (
    <section aria-labelledby="bulk-title">
      <h2 id="bulk-title">Replay dead letters</h2>
      <form class="filters" aria-labelledby="bulk-title" onSubmit={prepare}>
        <label>
          Destination{" "}
          <select name="destination" required>
            {props.destinations.map((d) => (
              <option key={d.id} value={d.id}>
                {d.id}
              </option>
            ))}
          </select>
        </label>
        <label>
          From <input name="from" type="datetime-local" />
        </label>
        <label>
          To <input name="to" type="datetime-local" />
        </label>
        <button type="submit">Replay dead letters…</button>
      </form>
      <p role="status">{message}</p>
      <dialog ref={dialog} aria-labelledby="confirm-title" onClose={() => setPlan(undefined)}>
        {plan && (
          <>
            <h2 id="confirm-title">Confirm replay</h2>
            <p>
              {plan.count === 0
                ? `There are no dead letters for ${plan.id} in this range.`
                : `Replay ${plan.more ? "more than " : ""}${plan.count} dead letter${plan.count === 1 ? "" : "s"} to ${plan.id}?`}
            </p>
            <div class="actions">
              <button type="button" onClick={() => setPlan(undefined)}>
                Cancel
              </button>
              <button type="button" class="primary" disabled={plan.count === 0} onClick={() => void confirm()}>
                Replay {plan.count}
              </button>
            </div>
          </>
        )}
      </dialog>
    </section>
  );
}

export function DestinationsView() {
  const [destinations, setDestinations] = useState<Destination[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const load = useCallback(
    () =>
      callApi<{ destinations: Destination[] }>("/destinations").then(
        (answer) => setDestinations(answer.destinations),
        (failure) => setError(describeError(failure)),
      ),
    [],
  );
  useEffect(() => {
    void load();
  }, [load]);

  const act = async (id: string, action: "pause" | "resume") => {
    try {
      await callApi(`/destinations/${encodeURIComponent(id)}/${action}`, { method: "POST" });
      setMessage(`${id} ${action === "pause" ? "paused" : "resumed"}.`);
      await load();
    } catch (failure) {
      setMessage(describeError(failure));
    }
  };

  return (
    <main id="main">
      <h1>Destinations</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <p role="status">{message}</p>
      {destinations && destinations.length === 0 && <NoDestinations />}
      {destinations && destinations.length > 0 && (
        <div class="table-wrap">
          <table class="cards" aria-label="Destinations">
            <thead>
              <tr>
                <th scope="col">Destination</th>
                <th scope="col">State</th>
                <th scope="col">Breaker</th>
                <th scope="col">Backlog</th>
                <th scope="col">Last error</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {destinations.map((d) => (
                <tr key={d.id} data-destination={d.id}>
                  <th scope="row">
                    {d.id} <span class="hint">({d.type})</span>
                  </th>
                  <td class="dest-state" data-label="State">
                    <span class={`state state-${d.state}`}>{d.state}</span>
                    {d.reason && <span class="hint"> {d.reason}</span>}
                  </td>
                  <td data-label="Breaker">
                    {d.breaker.state}
                    {d.breaker.consecutive_failures > 0 && ` (${d.breaker.consecutive_failures} failures)`}
                  </td>
                  <td data-label="Backlog">{d.backlog}</td>
                  <td data-label="Last error">
                    {d.last_error ? `${formatTime(d.last_error.at)}: ${d.last_error.error}` : "—"}
                  </td>
                  <td data-label="Action">
                    {d.state !== "active" ? (
                      <button type="button" onClick={() => void act(d.id, "resume")} aria-label={`Resume ${d.id}`}>
                        Resume
                      </button>
                    ) : (
                      <button type="button" onClick={() => void act(d.id, "pause")} aria-label={`Pause ${d.id}`}>
                        Pause
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {destinations && destinations.length > 0 && <BulkReplay destinations={destinations} onDone={() => void load()} />}
    </main>
  );
}
