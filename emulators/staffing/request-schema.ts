/**
 * The create payload of `POST /staffing-requests` (staffing reference, Create payload and Rules):
 * snake_case keys are normalized to camelCase at every depth (`start_time` → `startTime`,
 * `external_request_id` → `externalId`), then validated. Required here: `externalId`, `shift`
 * (`startTime`, `endTime` with a UTC offset, `location`, `role`), `candidates` (`id`, `name`,
 * `phone` in international format, `priority`), and `webhookUrl` unless the organization has a
 * default one: the reference's minimal working payload.
 */
import * as v from "valibot";
import { dateTime, httpUrl, text } from "../shared/validation.ts";

const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const ALIASES: Record<string, string> = { externalRequestId: "externalId" };

/** The payload with every key in camelCase (aliases applied). */
export function normalizeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalizeKeys);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const name = ALIASES[camel(key)] ?? camel(key);
    if (!(name in out) || key === name) out[name] = normalizeKeys(inner);
  }
  return out;
}

const Candidate = v.object({
  id: text(1, 255),
  name: text(1, 255),
  phone: v.pipe(v.string(), v.regex(/^\+[1-9]\d{6,14}$/, "must be in international format (+46...)")),
  priority: v.pipe(v.number(), v.integer()),
  allowedToWork: v.optional(v.boolean(), true),
  category: v.optional(v.picklist(["ordinarie", "anhorig", "tim"])),
  hourlyRateOre: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});

const Rules = v.object({
  requireManagerApproval: v.optional(v.boolean(), true),
  minConfidenceForAutoBook: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1)), 0.9),
  stopWhenAccepted: v.optional(v.boolean(), true),
  maxAcceptedWorkers: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10)), 1),
  maxAttemptsPerCandidate: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(5)), 1),
  callTimeoutSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(5), v.maxValue(120)), 25),
  allowPartial: v.optional(v.boolean(), true),
});

/** The validated create payload; `webhookUrl` optional here and checked against the default. */
export const CreateStaffingRequest = v.pipe(
  v.object({
    externalId: text(1, 255),
    organizationId: v.optional(text(1, 255)),
    mode: v.optional(v.picklist(["cover", "interest"]), "cover"),
    shift: v.pipe(
      v.object({
        id: v.optional(text(1, 255)),
        startTime: dateTime(),
        endTime: dateTime(),
        location: text(1, 500),
        role: text(1, 255),
        residentName: v.optional(text(1, 255)),
      }),
      v.check((s) => Date.parse(s.endTime) > Date.parse(s.startTime), "shift.endTime must be after shift.startTime"),
    ),
    candidates: v.pipe(v.array(Candidate), v.minLength(1), v.maxLength(200)),
    rules: v.optional(Rules, {}),
    webhookUrl: v.optional(httpUrl(2000)),
  }),
  v.check((p) => new Set(p.candidates.map((c) => c.id)).size === p.candidates.length, "candidates: ids must be unique"),
);
export type CreateStaffingRequest = v.InferOutput<typeof CreateStaffingRequest>;
