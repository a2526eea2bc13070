// A JSON answer that may take a while, written so that a client who leaves is noticed. Under
// workerd a closed connection is noticed (request.signal aborts) only when something is written
// to it, and a JSON answer writes nothing until it is done, so an abandoned request would run to
// its end (docs/decisions.md, "Abandoned requests under workerd"). When the body is not ready
// within `probeMs`, the answer commits to 200 and writes a space every `probeMs` (whitespace
// before a JSON document is valid JSON); a failure after that is the protocol's error body.
import { jsonResponse } from "./answers.js";

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export interface PatientJsonOptions {
  /** 0 turns the probe off: the answer waits for the body, with its exact status. */
  readonly probeMs: number;
  /** The client's cancellation of the body (Node notices a closed connection this way). */
  readonly onCancel: (reason: unknown) => void;
  /** The error body for a failure once the status is sent. */
  readonly errorBody: (error: unknown) => Promise<string>;
  /** Called when the answer commits to 200 before its body is ready. */
  readonly onCommitted?: () => void;
  /** Called once a committed answer's body is written (`ok` false: it is the error body). */
  readonly onWritten?: (ok: boolean) => void;
}

const SPACE = new TextEncoder().encode(" ");

export async function patientJson(body: Promise<unknown>, options: PatientJsonOptions): Promise<Response> {
  const settled: Promise<Outcome> = body.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
  const early =
    options.probeMs > 0
      ? await Promise.race([settled, new Promise<undefined>((r) => setTimeout(r, options.probeMs))])
      : await settled;
  if (early !== undefined) {
    if (!early.ok) throw early.error;
    return jsonResponse(early.value);
  }
  options.onCommitted?.();
  let timer: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (bytes: Uint8Array): void => {
        try {
          controller.enqueue(bytes);
        } catch {
          // the client is gone; the cancellation path stops the generation
        }
      };
      write(SPACE.slice());
      timer = setInterval(() => write(SPACE.slice()), options.probeMs);
      void settled.then(async (outcome) => {
        clearInterval(timer);
        const text = outcome.ok ? JSON.stringify(outcome.value) : await options.errorBody(outcome.error);
        write(new TextEncoder().encode(text));
        try {
          controller.close();
        } catch {
          // already cancelled
        }
        options.onWritten?.(outcome.ok);
      });
    },
    cancel(reason) {
      clearInterval(timer);
      options.onCancel(reason);
    },
  });
  return new Response(stream, {
    status: 200,
    headers: { "content-type": "application/json", "content-encoding": "identity" },
  });
}
