// Message threads (`thread`, beta message-threads-2026-08-12) on a server without a store (a
// Worker without its D1 binding): no thread can be kept, so the server answers as the API does for
// a request it cannot thread, and the SDK (its tool runner) carries on without a thread, sending
// the whole conversation: `create` is a 400 `thread_unsupported_request`, `continue` a 404
// `thread_not_found`. With a store, edge/state/threads/ keeps threads (docs/contract.md,
// "Anthropic message threads").
import { InvalidRequestError, NotFoundError } from "../../base/errors.js";

export type ThreadField = { type: "create" } | { type: "continue"; previous_message_id: string };

export function refuseThread(thread: ThreadField | null | undefined): void {
  if (thread == null) return;
  if (thread.type === "create") {
    throw new InvalidRequestError(
      "This server does not keep message threads; send the whole conversation in 'messages'.",
      {
        param: "thread",
        details: { error_code: "thread_unsupported_request", unsupported: ["thread"] },
      },
    );
  }
  throw new NotFoundError(
    `Thread message '${thread.previous_message_id}' was not found: this server keeps no threads.`,
    {
      param: "thread.previous_message_id",
      details: { error_code: "thread_not_found" },
    },
  );
}
