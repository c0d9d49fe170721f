/**
 * An `http://` or `https://` URL with a host and no credentials in it (a key belongs in its own
 * setting, taken from the environment, never in a URL that logs and errors may print).
 */
import * as v from "valibot";

export function httpUrlWithoutCredentials(message: string) {
  return v.pipe(
    v.string(),
    v.check((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === "https:" || url.protocol === "http:") && url.hostname !== "" && !url.username;
      } catch {
        return false;
      }
    }, message),
  );
}
