/**
 * The agreement endpoints of the e-sign fake (seeds/esign-api-v1.md, Endpoints): list, create
 * (with `Idempotency-Key` replay and `Idempotent-Replayed: true`), get, the binary main-document
 * upload (`PUT /agreements/{id}/documents/main`, `application/pdf`) and the PDF download. Uploads
 * are hashed as they arrive; downloads are written with backpressure so tests can watch them.
 */
import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody, sendError, sendJson } from "./fake-http.ts";

interface Agreement {
  id: string;
  status: string;
  title: string;
  external_id: string | null;
  created_at: string;
  document?: Buffer;
}

/** The agreement store and routes; `need(scope)` answers 403 and returns false without the scope. */
export function createAgreementEndpoints(now: () => number) {
  const agreements = new Map<string, Agreement>();
  const documentHashes = new Map<string, string>();
  const idempotency = new Map<string, { bodyHash: string; status: number; body: unknown }>();
  const uploadHeaders: IncomingMessage["headers"][] = [];
  let downloadSent = 0;
  let uploadGate: Promise<void> = Promise.resolve();

  const agreementRoutes = async (
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    path: string,
    url: URL,
    need: (scope: string) => boolean,
  ) => {
    const parts = path.split("/").slice(1);
    if (parts[0] !== "agreements") return sendError(res, 404, "not_found", "no such endpoint");
    if (parts.length === 1 && method === "GET") {
      if (!need("agreements:read")) return;
      const status = url.searchParams.get("status");
      const list = [...agreements.values()].filter((a) => !status || a.status === status).map(publicAgreement);
      return sendJson(res, 200, { agreements: list });
    }
    if (parts.length === 1 && method === "POST") {
      if (!need("agreements:create")) return;
      return createFromRequest(req, res);
    }
    const agreement = agreements.get(parts[1] ?? "");
    if (!agreement) {
      req.resume();
      return sendError(res, 404, "not_found", "agreement not found");
    }
    const rest = parts.slice(2).join("/");
    if (rest === "" && method === "GET") {
      if (need("agreements:read")) sendJson(res, 200, publicAgreement(agreement));
      return;
    }
    if (rest === "documents/main" && method === "PUT") {
      if (need("agreements:create")) await upload(req, res, agreement);
      return;
    }
    if (rest === "download" && method === "GET") {
      if (!need("agreements:read")) return;
      if (!agreement.document) return sendError(res, 404, "not_found", "no document");
      return sendDocument(res, agreement.document);
    }
    req.resume();
    sendError(res, 404, "not_found", "no such endpoint");
  };

  const createFromRequest = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    const key = req.headers["idempotency-key"] as string | undefined;
    const bodyHash = createHash("sha256").update(raw).digest("hex");
    if (key) {
      const earlier = idempotency.get(key);
      if (earlier && earlier.bodyHash !== bodyHash) return sendError(res, 409, "conflict", "Idempotency-Key reused");
      if (earlier) return sendJson(res, earlier.status, earlier.body, { "idempotent-replayed": "true" });
    }
    let input: { title?: unknown; external_id?: unknown };
    try {
      input = JSON.parse(raw.toString("utf8"));
    } catch {
      return sendError(res, 400, "invalid_request", "JSON body required");
    }
    if (typeof input.title !== "string" || input.title.length < 1 || input.title.length > 255) {
      return sendError(res, 400, "invalid_request", "title is required (1 to 255 chars)");
    }
    const id = createAgreement(input.title, typeof input.external_id === "string" ? input.external_id : null);
    const body = publicAgreement(agreements.get(id) as Agreement);
    if (key) idempotency.set(key, { bodyHash, status: 201, body });
    sendJson(res, 201, body);
  };

  /** Writes the PDF in 64 KiB pieces, each after the socket took the previous one (backpressure). */
  const sendDocument = async (res: ServerResponse, document: Buffer) => {
    res.writeHead(200, { "content-type": "application/pdf", "content-length": document.byteLength });
    for (let offset = 0; offset < document.byteLength; offset += 65_536) {
      if (res.destroyed) return;
      const piece = document.subarray(offset, offset + 65_536);
      if (!res.write(piece)) await new Promise((resolve) => res.once("drain", resolve));
      downloadSent += piece.byteLength;
    }
    res.end();
  };

  const upload = async (req: IncomingMessage, res: ServerResponse, agreement: Agreement) => {
    if (!/^application\/pdf\b/.test(req.headers["content-type"] ?? "")) {
      req.resume();
      return sendError(res, 400, "invalid_request", "application/pdf body expected");
    }
    uploadHeaders.push({ ...req.headers });
    await uploadGate;
    const hash = createHash("sha256");
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
      hash.update(chunk as Buffer);
      chunks.push(chunk as Buffer);
    }
    agreement.document = Buffer.concat(chunks);
    documentHashes.set(agreement.id, hash.digest("hex"));
    sendJson(res, 200, { ok: true });
  };

  const createAgreement = (title = "Agreement", externalId: string | null = null) => {
    const id = randomUUID();
    agreements.set(id, {
      id,
      status: "draft",
      title,
      external_id: externalId,
      created_at: new Date(now()).toISOString(),
    });
    return id;
  };

  return {
    routes: agreementRoutes,
    createAgreement,
    documentHashes,
    uploadHeaders,
    /** Makes PDF uploads wait (unread) until the returned function is called. */
    holdUploads() {
      let release = () => {};
      uploadGate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return release;
    },
    downloadSent: () => downloadSent,
  };
}

function publicAgreement(a: Agreement) {
  return {
    id: a.id,
    status: a.status,
    title: a.title,
    external_id: a.external_id,
    version: 1,
    document: { uploaded: Boolean(a.document) },
    created_at: a.created_at,
    updated_at: a.created_at,
  };
}
