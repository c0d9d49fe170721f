/**
 * The contract every upstream service module implements (docs/architecture.md): how its
 * webhooks are signed and verified, how a verified body becomes the facts of a CloudEvent, the
 * samples `gateway trigger` sends, the kind of credential its API proxy uses, its default
 * e-mail templates and, optionally, how `gateway listen` re-signs a body in its scheme and which
 * API resource describes an event (route enrichment, src/enrich). The gateway's core reaches a service only through this interface, looked up
 * by the `service` name a source or an upstream names in the configuration.
 *
 * Service modules are leaves: they import only this contract, the crypto contract
 * (crypto-port.ts) and valibot.
 */

import type { CryptoPort } from "../crypto/crypto-port.ts";
import type { HeaderReader } from "../http/header-reader.ts";
import type { VerifyFailure, VerifyResult } from "./verify-result.ts";

/** Named fields the event log indexes (src/store/match-event-query.ts). */
export type SearchField = "externalId";

/** What a service needs to know about the source a delivery arrived at (from its config). */
export interface ServiceSource {
  id: string;
  /** Active signing secrets; any one verifies (rotation). */
  secrets: readonly string[];
  /** Accepted clock difference for timestamped signatures, seconds. */
  toleranceSeconds: number;
  /** Where the dedupe identity comes from when the service offers a choice. */
  identity: "delivery-id" | "body-sha256";
}

/** One delivery as received, before its body is parsed. */
export interface WebhookDelivery {
  source: ServiceSource;
  headers: HeaderReader;
  /** The exact bytes received; signatures are checked on these. */
  rawBody: Uint8Array;
  /** Receive time, epoch ms. */
  nowMs: number;
  /**
   * The signature headers as this service's `checkSignatureForm` parsed them for this delivery,
   * when the ingress checked them before reading the body: reused, not parsed again.
   */
  signatureForm?: unknown;
}

/** The signature headers' form: parsed (opaque to the caller), or why they can never verify. */
export type SignatureForm = { ok: true; form: unknown } | { ok: false; reason: VerifyFailure };

/** What a service reads out of a verified body. */
export interface EventFacts {
  /** The upstream identity used for dedupe (at most 200 characters). */
  identity: string;
  /** How the identity was obtained, e.g. `event_id`, `delivery-id`, `body-sha256`. */
  identityKind: string;
  /** The upstream event type, when the body names one. */
  type?: string;
  /** The CloudEvents `subject`, e.g. `agreements/{id}`, when the body names one. */
  subject?: string;
  /** When the upstream says the event happened (any value; unparseable means "receive time"). */
  time?: unknown;
  /** Schema marks (`extra_fields`, `schema_mismatch`, `unknown_type`); marks never reject. */
  marks: string[];
}

export type DescribeResult = ({ ok: true } & EventFacts) | { ok: false; message: string };

/** A signed sample delivery, exactly as the upstream would send it. */
export interface SampleDelivery {
  body: string;
  headers: Record<string, string>;
}

export interface SampleOptions {
  /** Unique part of ids. */
  uniqueId: string;
  /** Epoch ms used for timestamps and time-bound signatures. */
  now: number;
  /** Override the subject (agreement, request, ...) the event belongs to. */
  subjectId?: string;
}

/** What one outgoing delivery is signed for (see `UpstreamService.signDelivery`). */
export interface SignOptions {
  /** Epoch ms of the attempt; time-bound signatures cover it. */
  nowMs: number;
  /** The delivery's id, for schemes that send one in a header. */
  deliveryId: string;
}

/**
 * How the API proxy authenticates to the service (src/proxy/upstream-credentials.ts implements
 * the kinds; src/config/upstreams-schema.ts holds each kind's config fields):
 * - `oauth-client-credentials`: `clientId` + `clientSecret`, a cached bearer token from
 *   `POST {baseUrl}{tokenPath}`.
 * - `api-key`: `apiKey`, sent as a bearer token.
 */
export type ProxyCredentialKind = { kind: "oauth-client-credentials"; tokenPath: string } | { kind: "api-key" };

/** A default mail template (the `{{path | fallback}}` syntax of src/delivery/email/render-template.ts). */
export interface ServiceMailTemplate {
  subject: string;
  text: string;
  html?: string;
}

/**
 * A chat message for one event type (the built-in Slack, Teams and Discord transforms,
 * src/transform/builtin-transforms.ts). Strings use the `{{path | fallback}}` syntax of the mail
 * templates over the CloudEvent; `facts` whose value renders empty are left out.
 */
export interface ServiceChatMessage {
  /** One line, e.g. `Agreement completed: {{data.external_id | subject}}`. */
  title: string;
  /** A sentence saying what happened and what to do. */
  text: string;
  facts: [label: string, template: string][];
}

/** The parts of a recorded CloudEvent a service may read (src/events/envelope.ts). */
export interface ServiceEvent {
  type: string;
  subject?: string;
  /** The upstream's webhook body as received (JSON). */
  data: unknown;
}

/** Route enrichment (docs/fan-out-and-destinations.md, Enrichment): which API resource describes an event. */
export interface ServiceEnrichment {
  /**
   * The path under the upstream's API root to GET (e.g. `/agreements/{id}`, the id
   * URI-encoded), or undefined when the event names no resource.
   */
  resourcePath(event: ServiceEvent): string | undefined;
}

/** One upstream service. */
export interface UpstreamService {
  /** The name configuration uses (`service: "esign"`): lower-case letters, digits and `-`. */
  readonly name: string;
  /** Every documented event type, in the order `gateway trigger` lists them. */
  readonly eventTypes: readonly string[];
  /**
   * Fields the event log indexes and searches by name (`GET /events?external_id=`), each as dot
   * paths in the webhook body (`external_id`, `data.external_id`); the first path holding a
   * string wins. Anything else is searched with a filter (docs/filters.md).
   */
  readonly searchFields?: Readonly<Partial<Record<SearchField, readonly string[]>>>;
  /**
   * Verifies one delivery on its raw bytes; never throws for bad input. Called with no secrets
   * and an empty body, it must stop at `signature_mismatch` exactly when the headers are well
   * formed (the ingress's form check for a service without `checkSignatureForm`).
   */
  verifyWebhook(delivery: WebhookDelivery, crypto: CryptoPort): Promise<VerifyResult>;
  /**
   * Checks the signature headers' presence and form from the headers alone, before the body is
   * read (src/ingress/precheck-signature.ts), and returns them parsed: `verifyWebhook` then gets
   * that form as `delivery.signatureForm` instead of parsing the headers a second time. Must fail
   * exactly when `verifyWebhook` would stop before comparing a MAC.
   */
  checkSignatureForm?(headers: HeaderReader): SignatureForm;
  /** Reads identity, type, subject, time and marks from a verified body that is a JSON object. */
  describeEvent(
    body: Record<string, unknown>,
    delivery: Omit<WebhookDelivery, "nowMs">,
    crypto: CryptoPort,
  ): Promise<DescribeResult>;
  /**
   * The headers that authenticate one delivery of `rawBody` as the upstream sends them: its
   * signature, plus the timestamp or delivery-id headers its scheme carries (no content type).
   * The upstream emulators (emulators/) and `gateway listen --format upstream` (src/listen) sign
   * with it; `verifyWebhook` accepts what it produces.
   */
  signDelivery(
    secret: string,
    rawBody: Uint8Array,
    options: SignOptions,
    crypto: CryptoPort,
  ): Promise<Record<string, string>>;
  /** A realistic body of `type`, signed with `secret` as the upstream would sign it. */
  buildSample(type: string, secret: string, options: SampleOptions, crypto: CryptoPort): Promise<SampleDelivery>;
  /** How the API proxy authenticates to this service. */
  readonly proxyCredentials: ProxyCredentialKind;
  /** Default mail templates by exact event type (others get the generic template). */
  readonly mailTemplates: Readonly<Record<string, ServiceMailTemplate>>;
  /** Chat messages by exact event type, one for every type in `eventTypes` (others get a generic one). */
  readonly chatMessages?: Readonly<Record<string, ServiceChatMessage>>;
  /** How route enrichment finds the resource of an event, when the service offers it. */
  readonly enrichment?: ServiceEnrichment;
}

/** Services by name. */
export type ServiceRegistry = ReadonlyMap<string, UpstreamService>;

/** The longest upstream identity kept for dedupe. */
export const MAX_IDENTITY_LENGTH = 200;
