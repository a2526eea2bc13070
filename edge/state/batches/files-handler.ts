// OpenAI's Files API (docs/contract.md, "Batches"): POST /v1/files (multipart, purpose `batch`, or `vision`,
// `user_data`, `assistants` for images a request names by file_id), GET /v1/files, GET /v1/files/{id},
// GET /v1/files/{id}/content, DELETE /v1/files/{id}.
// A file's bytes are in the host's file store under its id; its record says whose it is.
import { callerOf } from "../../access/caller.js";
import { InvalidRequestError, NotFoundError } from "../../base/errors.js";
import { readBodyBytes } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import { pageOptions } from "../items/page.js";
import type { Batches } from "./batches.js";
import { fileObject } from "./encoder.js";
import type { MediaFiles } from "../../core/media/settings.js";
import { UPLOAD_PURPOSES, type FilePurpose, type FileRecord } from "./store.js";

function notFound(id: string): NotFoundError {
  return new NotFoundError(`No such File object: ${id}`, { param: "id", code: "file_not_found" });
}

/** The caller's file `id`, or a 404. */
export async function ownFile(batches: Batches, request: Request, id: string): Promise<FileRecord> {
  const file = await batches.store.getFile(callerOf(request).keyId, id);
  if (file === undefined) throw notFound(id);
  return file;
}

/** The multipart body's `file` and `purpose`; the whole body at most `limit` bytes (else a 413). */
async function uploaded(request: Request, limit: number): Promise<{ file: File; purpose: FilePurpose }> {
  const bytes = await readBodyBytes(request, limit);
  let form: FormData;
  try {
    form = await new Response(bytes as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": request.headers.get("content-type") ?? "" },
    }).formData();
  } catch {
    throw new InvalidRequestError("POST /v1/files takes a multipart/form-data body with 'file' and 'purpose'.", {
      code: "invalid_multipart",
    });
  }
  const file = form.get("file");
  const purpose = form.get("purpose");
  if (typeof file === "string" || file === null)
    throw new InvalidRequestError("'file' is required: the file to upload.", { param: "file" });
  if (typeof purpose !== "string" || !UPLOAD_PURPOSES.includes(purpose as FilePurpose))
    throw new InvalidRequestError(
      `'purpose' must be one of ${UPLOAD_PURPOSES.map((p) => `'${p}'`).join(", ")}: 'batch' for a batch's ` +
        "input, the others for images a request names by file_id.",
      { param: "purpose" },
    );
  return { file, purpose: purpose as FilePurpose };
}

/** The caller's uploaded files, as a request's file_id reads them (core/media/). */
export function imageFiles(batches: Batches): MediaFiles {
  return async (owner, id) => {
    const file = await batches.store.getFile(owner, id);
    const body = file === undefined ? undefined : await batches.files.get(file.id);
    if (file === undefined || body === undefined) return undefined;
    return { purpose: file.purpose, bytes: new Uint8Array(await new Response(body).arrayBuffer()) };
  };
}

/** POST /v1/files */
export async function handleCreateFile(request: Request, context: AppContext, batches: Batches): Promise<Response> {
  const { file, purpose } = await uploaded(request, batches.maxFileBytes);
  if (file.size > batches.maxFileBytes) {
    throw new InvalidRequestError(`The file is over ${batches.maxFileBytes} bytes, the largest this server accepts.`, {
      param: "file",
      code: "file_too_large",
    });
  }
  const record: FileRecord = {
    id: `file-${context.newId()}`,
    owner: callerOf(request).keyId,
    createdAt: context.now(),
    filename: file.name === "" ? (purpose === "batch" ? "upload.jsonl" : "upload") : file.name,
    purpose,
    bytes: file.size,
  };
  await batches.files.put(record.id, new Uint8Array(await file.arrayBuffer()));
  await batches.store.putFile(record);
  return jsonResponse(fileObject(record));
}

/** GET /v1/files?purpose=&order=&limit=&after= */
export async function handleListFiles(request: Request, batches: Batches): Promise<Response> {
  const url = new URL(request.url);
  const options = pageOptions(url);
  const purpose = url.searchParams.get("purpose") ?? undefined;
  const page = await batches.store.listFiles(callerOf(request).keyId, { ...options, purpose });
  const data = page.data.map(fileObject);
  return jsonResponse({
    object: "list",
    data,
    first_id: page.data[0]?.id ?? null,
    last_id: page.data.at(-1)?.id ?? null,
    has_more: page.hasMore,
  });
}

/** GET /v1/files/{id} */
export async function handleGetFile(id: string, request: Request, batches: Batches): Promise<Response> {
  return jsonResponse(fileObject(await ownFile(batches, request, id)));
}

/** GET /v1/files/{id}/content */
export async function handleFileContent(id: string, request: Request, batches: Batches): Promise<Response> {
  const file = await ownFile(batches, request, id);
  const body = await batches.files.get(file.id);
  if (body === undefined) throw notFound(id);
  return new Response(body, {
    headers: { "content-type": "application/octet-stream", "content-length": String(file.bytes) },
  });
}

/** DELETE /v1/files/{id} */
export async function handleDeleteFile(id: string, request: Request, batches: Batches): Promise<Response> {
  await ownFile(batches, request, id);
  await batches.store.deleteFile(callerOf(request).keyId, id);
  await batches.files.delete(id);
  return jsonResponse({ id, object: "file", deleted: true });
}
