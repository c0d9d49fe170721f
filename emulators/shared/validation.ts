/**
 * Valibot at the emulators' boundary: a failed parse answers 400 `invalid_request` with the
 * issues (`details.issues`: dot path and message), the shape a client can show next to a field.
 */
import * as v from "valibot";
import { fail } from "./http-answers.ts";

/** Parses `input` with `schema` or answers 400 `invalid_request`. */
export function parseOrFail<S extends v.GenericSchema>(schema: S, input: unknown, what: string): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const issues = result.issues.map((issue) => ({
    path: v.getDotPath(issue) ?? "",
    message: issue.message,
  }));
  return fail(400, "invalid_request", `invalid ${what}: ${issues[0]?.path || "body"}: ${issues[0]?.message}`, {
    issues,
  });
}

/** A string of `min`..`max` characters. */
export const text = (min: number, max: number) => v.pipe(v.string(), v.minLength(min), v.maxLength(max));

/** An e-mail address of at most `max` characters. */
export const email = (max = 255) => v.pipe(v.string(), v.email(), v.maxLength(max));

/** An absolute http(s) URL of at most `max` characters. */
export const httpUrl = (max: number) =>
  v.pipe(
    v.string(),
    v.maxLength(max),
    v.url(),
    v.check((value) => /^https?:\/\//i.test(value), "must be an http(s) URL"),
  );

/** An RFC 3339 date-time with a zone (`Z` or an offset). */
export const dateTime = () =>
  v.pipe(
    v.string(),
    v.regex(
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i,
      "must be ISO 8601 with a UTC offset",
    ),
    v.check((value) => !Number.isNaN(Date.parse(value)), "must be a valid date-time"),
  );
