// The check of the routes that change the catalogue (Ollama's pull by address and delete): the caller must be an
// admin (edge/access/caller.ts says who is).
import { callerOf } from "../access/caller.js";
import { PermissionDeniedError } from "../base/errors.js";

/** Refuses (403) a request whose caller is no admin. */
export function requireAdmin(request: Request): void {
  if (callerOf(request).admin === true) return;
  throw new PermissionDeniedError(
    "This operation needs an admin key (one of ADMIN_KEYS, sent as 'Authorization: Bearer <key>').",
    { code: "admin_key_required" },
  );
}
