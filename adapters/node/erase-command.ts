/**
 * `gateway erase --subject <subject> | --filter <json> [--dry-run]`: erasure on request through a running gateway's
 * `POST /events/erase` (docs/data-lifecycle.md). The admin key comes from `--key`, else
 * `GATEWAY_ADMIN_KEY` (alias `GATEWAY_API_KEY`), else the zero-config gateway's development key
 * (admin-key-env.ts); it prints one line.
 */
import { defineCommand } from "citty";
import { ADMIN_KEY_ALIAS, ADMIN_KEY_VARIABLE, adminKeyOf } from "./admin-key-env.ts";
import { CliFailure, fetchGateway, UsageError } from "./cli-errors.ts";

interface EraseAnswer {
  events: number;
  already_erased: number;
  deliveries_cancelled: number;
  audit_event_id?: string;
  error?: { code: string; message: string };
}

export const eraseCommand = defineCommand({
  meta: { name: "erase", description: "Erase the recorded events of a subject or a filter (right to erasure)" },
  args: {
    subject: {
      type: "string",
      valueHint: "subject",
      description: "The events' CloudEvents subject, as GET /events shows it",
    },
    filter: {
      type: "string",
      valueHint: "json",
      description: "A content filter (docs/filters.md): erase the events it matches (with --subject: both)",
    },
    "dry-run": { type: "boolean", description: "Count what would be erased, erase nothing" },
    url: { type: "string", valueHint: "url", default: "http://127.0.0.1:8787", description: "The gateway" },
    key: {
      type: "string",
      valueHint: "adminKey",
      description: `Admin API key (default: ${ADMIN_KEY_VARIABLE}, alias ${ADMIN_KEY_ALIAS})`,
    },
  },
  async run({ args }) {
    if (!args.subject && !args.filter) throw new UsageError("erase needs --subject <subject> or --filter <json>");
    let filter: unknown;
    if (args.filter !== undefined) {
      try {
        filter = JSON.parse(args.filter);
      } catch {
        throw new UsageError('--filter: a filter as JSON, e.g. \'{"type":"candidate.accepted"}\'');
      }
    }
    const what = [args.subject, args.filter && `filter ${args.filter}`].filter(Boolean).join(" and ");
    const gateway = args.url.replace(/\/$/, "");
    const key = await adminKeyOf(args.key);
    const dryRun = args["dry-run"] === true;
    const response = await fetchGateway(`${gateway}/events/erase`, gateway, "Pass its address with --url.", {
      method: "POST",
      headers: { authorization: `Bearer ${key.value}`, "content-type": "application/json" },
      body: JSON.stringify({ subject: args.subject, filter, dryRun }),
    });
    const answer = (await response.json().catch(() => ({}))) as EraseAnswer;
    if (!response.ok) {
      throw new CliFailure(
        `${response.status} ${answer.error?.code ?? ""}: ${answer.error?.message ?? "not a gateway answer"} (admin key from ${key.from})`,
      );
    }
    const counts = `${answer.already_erased} erased before`;
    console.log(
      dryRun
        ? `would erase ${answer.events} events of ${what} (${counts})`
        : `erased ${answer.events} events of ${what} (${counts}, ${answer.deliveries_cancelled} pending deliveries cancelled); audit event ${answer.audit_event_id}`,
    );
  },
});
