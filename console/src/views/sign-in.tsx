/**
 * Sign-in: paste an admin key (or a client key with `scopes.events`). The key is checked with
 * `GET /events?limit=1` before it is kept, in `sessionStorage` only. In the zero-config
 * development setup the gateway offers its generated key (`GET /console/dev-key`).
 */
import { useEffect, useState } from "preact/hooks";
import { ApiError, callApi } from "../api.ts";
import { hasFeature } from "../features.ts";
import { saveKey } from "../session.ts";

function refusalMessage(error: unknown): string {
  if (error instanceof ApiError && error.status === 401) {
    return "This key was refused. Paste an admin API key, or a client key with scopes.events.";
  }
  if (error instanceof ApiError && error.status === 403) {
    return "This key is valid but may not read the event log (it needs scopes.events).";
  }
  if (error instanceof ApiError) return `The gateway answered: ${error.message}`;
  return "The gateway cannot be reached.";
}

export function SignIn(props: { onSignedIn(): void; notice?: string }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | undefined>(props.notice);
  const [busy, setBusy] = useState(false);
  const [devKey, setDevKey] = useState<string | undefined>();

  useEffect(() => {
    if (!hasFeature("dev-key")) return;
    callApi<{ key: string }>("/console/dev-key").then(
      (answer) => setDevKey(answer.key),
      () => setDevKey(undefined),
    );
  }, []);

  const signIn = async (candidate: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await callApi("/events?limit=1", { key: candidate });
      saveKey(candidate);
      props.onSignedIn();
    } catch (failure) {
      setError(refusalMessage(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <h1>Gateway console</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (key.trim()) void signIn(key.trim());
        }}
      >
        <label for="api-key">API key</label>
        <p id="api-key-help" class="hint">
          An admin key, or a client key with <code>scopes.events</code>. It is kept in this tab only (sessionStorage).
        </p>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          aria-describedby="api-key-help"
          aria-invalid={error ? true : undefined}
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
          required
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {devKey && (
        <section class="dev-key" aria-labelledby="dev-key-title">
          <h2 id="dev-key-title">Development setup</h2>
          <p>This gateway generated a development admin key (zero-config start on this machine).</p>
          <button type="button" disabled={busy} onClick={() => void signIn(devKey)}>
            Sign in with the development key
          </button>
        </section>
      )}
    </main>
  );
}
