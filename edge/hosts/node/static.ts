// The playground page on Node: GET/HEAD of `/` and of the files directly in public/ (the same
// files the Worker serves through its static-assets binding). Only names listed at start-up are
// served, so no path can reach outside the folder; everything else goes to the fetch handler.
import { readFileSync, readdirSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The page's folder: public/ at the project root (this file is edge/node/static.ts). */
export const PUBLIC_DIR = fileURLToPath(new URL("../../../public/", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".ico": "image/x-icon",
};

/** The page may load only its own files and call only its own origin. */
export const PAGE_CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri " +
  "'none'; " +
  "form-action 'none'; frame-ancestors 'none'";

interface StaticFile {
  readonly body: Uint8Array<ArrayBuffer>;
  readonly type: string;
}

/** The files of `dir` a browser may fetch, by URL path (`/` is index.html); read once. */
export function loadStaticFiles(dir: string = PUBLIC_DIR): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const type = TYPES[extname(entry.name)];
    if (!entry.isFile() || type === undefined) continue;
    const file = { body: new Uint8Array(readFileSync(join(dir, entry.name))), type };
    files.set(`/${entry.name}`, file);
    if (entry.name === "index.html") files.set("/", file);
  }
  return files;
}

/** A handler that answers the page's files and passes every other request on to `next`. */
export function withStaticFiles(
  files: Map<string, StaticFile>,
  next: (request: Request) => Promise<Response>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const file =
      request.method === "GET" || request.method === "HEAD" ? files.get(new URL(request.url).pathname) : undefined;
    if (file === undefined) return next(request);
    const headers = {
      "content-type": file.type,
      "content-length": String(file.body.byteLength),
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
      ...(file.type.startsWith("text/html") ? { "content-security-policy": PAGE_CSP } : {}),
    };
    return new Response(request.method === "HEAD" ? null : file.body, { headers });
  };
}
