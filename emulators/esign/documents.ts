/**
 * The main document and the signed PDF (esign reference, Endpoints > Agreements):
 * `PUT /agreements/{id}/documents/main` (also POST, as the machine description lists it) takes a
 * binary `application/pdf` body or JSON `filename` + `content_base64`, answers `{ok: true}`;
 * `GET /agreements/{id}/download` streams the PDF (the stamped one once completed);
 * `GET /agreements/{id}/signed-pdf` gives a URL valid 3600 s (409 before completion).
 * Uploads: 600 per hour per client, bodies must start with `%PDF-`, at most `maxDocumentBytes`.
 */
import type { H3Event } from "h3";
import { answer, param } from "../shared/emulator-frame.ts";
import { sha256Hex } from "../shared/hmac.ts";
import { errorAnswer, fail, json, parseJsonObject, readBytes } from "../shared/http-answers.ts";
import { createRateLimit } from "../shared/rate-limit.ts";
import { parseOrFail } from "../shared/validation.ts";
import { DocumentJson } from "./agreement-schemas.ts";
import { type EsignContext, findAgreement, recordAudit, touch } from "./esign-context.ts";
import type { Guard } from "./tokens.ts";
import { issueSignedPdfUrl, sendAgreement, signedPdfLinks } from "./transitions.ts";

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // "%PDF-"
const PIECE = 65_536;

/** Adds the document routes; returns the test hooks (upload hold, bytes sent, upload headers). */
export function addDocumentRoutes(ctx: EsignContext, guard: Guard) {
  const { app, api } = ctx.frame;
  const maxBytes = ctx.options.maxDocumentBytes ?? 128 * 1024 * 1024;
  const uploads = createRateLimit(ctx.options.uploadLimitPerHour ?? 600, 3600_000, () => ctx.scheduler.now());
  const hooks = {
    uploadHeaders: [] as Record<string, string>[],
    downloadSent: 0,
    gate: Promise.resolve(),
  };

  const readDocument = async (event: H3Event) => {
    const type = event.req.headers.get("content-type") ?? "";
    if (/^application\/pdf\b/i.test(type)) {
      await hooks.gate;
      return { bytes: await readBytes(event.req, maxBytes), filename: null };
    }
    if (/^application\/json\b/i.test(type)) {
      // base64 is 4/3 of the bytes it carries.
      const body = parseOrFail(
        DocumentJson,
        parseJsonObject(await readBytes(event.req, Math.ceil(maxBytes * 1.4) + 4096)),
        "document",
      );
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body.content_base64))
        fail(400, "invalid_request", "content_base64 is not base64");
      const bytes = Uint8Array.from(atob(body.content_base64), (c) => c.charCodeAt(0));
      return { bytes, filename: body.filename };
    }
    await event.req.body?.cancel().catch(() => {});
    return fail(400, "invalid_request", "send application/pdf or JSON with filename and content_base64");
  };

  const upload = answer(async (event) => {
    const caller = await guard(event, "agreements:create");
    const limit = uploads.hit(caller.clientId);
    if (!limit.allowed) {
      await event.req.body?.cancel().catch(() => {});
      return errorAnswer(429, "rate_limited", "too many uploads", undefined, {
        "retry-after": String(limit.retryAfterSeconds),
      });
    }
    const agreement = findAgreement(ctx, param(event, "id"));
    hooks.uploadHeaders.push(Object.fromEntries(event.req.headers));
    if (hooks.uploadHeaders.length > 100) hooks.uploadHeaders.shift();
    const signedAlready = agreement.participants.some((p) => !p.is_sender && p.status === "signed");
    const replaceable = agreement.status === "draft" || (agreement.status === "sent" && !signedAlready);
    if (!replaceable) {
      await event.req.body?.cancel().catch(() => {});
      fail(409, "conflict", `the document can no longer be replaced (status ${agreement.status})`);
    }
    const { bytes, filename } = await readDocument(event);
    if (!PDF_MAGIC.every((b, i) => bytes[i] === b)) fail(400, "invalid_request", "the document is not a PDF");
    const replaced = agreement.document !== null && agreement.status !== "draft";
    // Hashing 100 MB takes a while: the answer does not wait for it (`document.sha256` is null meanwhile).
    const hashed = new Promise<string>((resolve, reject) => {
      setTimeout(() => sha256Hex(bytes).then(resolve, reject), 0);
    });
    const document = { bytes, filename, sha256: null as string | null, hashed };
    document.hashed.then((hex) => {
      document.sha256 = hex;
    });
    agreement.document = document;
    touch(ctx, agreement);
    recordAudit(ctx, agreement, "document.uploaded", { size: bytes.byteLength });
    if (replaced) ctx.emit(agreement, "agreement.pdf_replaced");
    // A new version of a sent agreement sends itself once it has its PDF (Version chain, rule 3).
    if (agreement.auto_send && agreement.participants.length > 0) await sendAgreement(ctx, agreement);
    return json(200, { ok: true });
  });
  app.put(`${api}/agreements/:id/documents/main`, upload);
  app.post(`${api}/agreements/:id/documents/main`, upload);

  app.get(
    `${api}/agreements/:id/download`,
    answer(async (event) => {
      await guard(event, "agreements:read");
      const agreement = findAgreement(ctx, param(event, "id"));
      const bytes = agreement.signed_document ?? agreement.document?.bytes;
      if (!bytes) fail(404, "not_found", "no document uploaded");
      return pdfResponse(bytes, (n) => {
        hooks.downloadSent += n;
      });
    }),
  );

  app.get(
    `${api}/agreements/:id/signed-pdf`,
    answer(async (event) => {
      await guard(event, "agreements:read");
      const agreement = findAgreement(ctx, param(event, "id"));
      if (agreement.status !== "completed") fail(409, "conflict", `agreement is ${agreement.status}, not completed`);
      if (agreement.completed_delivery === "secure_link") {
        fail(409, "conflict", "under secure_link delivery the signed PDF is only given through the personal download");
      }
      return json(200, { url: issueSignedPdfUrl(ctx, agreement), expires_in: 3600 });
    }),
  );

  app.get(`${ctx.frame.control.replace(/_emulator$/, "files")}/signed/:file`, (event) => {
    const token = param(event, "file").replace(/\.pdf$/, "");
    const link = signedPdfLinks.get(ctx)?.get(token);
    const agreement = link && link.expiresAt > ctx.scheduler.now() ? ctx.agreements.get(link.agreementId) : undefined;
    if (!agreement?.signed_document) return errorAnswer(404, "not_found", "link unknown or expired");
    return pdfResponse(agreement.signed_document, () => {});
  });

  return {
    hooks,
    /** Makes binary uploads wait (unread) until the returned function is called. */
    holdUploads() {
      let release = () => {};
      hooks.gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return release;
    },
  };
}

/** The PDF as a pull-based stream in 64 KiB pieces: each piece is made when the reader asks. */
function pdfResponse(bytes: Uint8Array, sent: (n: number) => void): Response {
  let offset = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (offset >= bytes.byteLength) return controller.close();
        const piece = bytes.subarray(offset, offset + PIECE);
        offset += piece.byteLength;
        sent(piece.byteLength);
        controller.enqueue(piece);
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, {
    status: 200,
    headers: { "content-type": "application/pdf", "content-length": String(bytes.byteLength) },
  });
}
