// The streaming SSE Response. Pull-based: a frame is produced only when the
// consumer asks for more (highWaterMark 0), so a slow client slows the sidecar
// read instead of growing a buffer.
//
// Keep-alive: when the next frame takes longer than `keepAliveMs`, a keep-alive frame
// is written instead (at most one per read, so backpressure still holds): a `: ping`
// comment unless the protocol has its own (Anthropic's `event: ping`).
// Besides keeping proxies from timing out an idle stream, the write is what lets
// workerd notice a client that left during a silence: measured under wrangler dev,
// `request.signal` does not abort on a disconnect until something is written.
import { formatComment } from "./frame.js";

const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};

export interface SseResponseOptions {
  /** Called once if the consumer cancels the body (e.g. the client went away on Node). */
  onCancel?: (reason: unknown) => void;
  /** Write a keep-alive frame after this much silence; 0 or undefined disables. */
  keepAliveMs?: number;
  /** The keep-alive frame (SSE text); default a `: ping` comment. */
  keepAlive?: string;
  headers?: Record<string, string>;
}

const PING = formatComment("ping");
const TIMED_OUT = Symbol("timed out");

function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Streams already formatted SSE text. Each `next()` of `frames` yields one chunk of
 * text (one or more whole events); an empty string is skipped.
 */
export function sseResponse(frames: AsyncIterator<string>, options: SseResponseOptions = {}): Response {
  const encoder = new TextEncoder();
  const keepAliveMs = options.keepAliveMs ?? 0;
  const keepAlive = encoder.encode(options.keepAlive ?? PING);
  let cancelled = false;
  // A frame asked for but not yet produced (survives a keep-alive ping).
  let pending: Promise<IteratorResult<string>> | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (pending === undefined) {
            pending = frames.next();
            pending.catch(() => undefined); // observed below; never an unhandled rejection
          }
          let result: IteratorResult<string> | typeof TIMED_OUT;
          try {
            result = keepAliveMs > 0 ? await within(pending, keepAliveMs) : await pending;
          } catch (error) {
            pending = undefined;
            if (!cancelled) controller.error(error);
            return;
          }
          if (cancelled) return;
          if (result === TIMED_OUT) {
            controller.enqueue(keepAlive.slice());
            return;
          }
          pending = undefined;
          if (result.done === true) {
            controller.close();
            return;
          }
          if (result.value !== "") {
            controller.enqueue(encoder.encode(result.value));
            return;
          }
        }
      },
      cancel(reason) {
        cancelled = true;
        options.onCancel?.(reason);
        // Ends the frame source once its pending step settles (the abort above makes it settle).
        frames.return?.().catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...options.headers } });
}
