// The Ollama-style `keep_alive` request field, in one place for every protocol that reaches a model
// (docs/contract.md, "Models"): how long the model stays loaded after the request, as a number of
// seconds or a duration string ("5m", "1h30m", "30s", "0", "-1"), → the proto's keep_alive_seconds
// (an int32; negative = keep loaded). A bad value is a 400 naming `keep_alive`.
import * as z from "zod";

/** The largest value a proto int32 holds: about 68 years, which is "for ever" here. */
const INT32_MAX = 0x7fff_ffff;

/** What the 400 says a value should look like. */
export const KEEP_ALIVE_FORMS =
  'expected a number of seconds or a duration such as "5m", "1h", "30s", "0" or "-1" (negative: keep loaded)';

/** Seconds per unit of Go's duration syntax, as Ollama reads it. */
const UNIT_SECONDS: Readonly<Record<string, number>> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  μs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};

const NUMBER = String.raw`(?:\d+(?:\.\d*)?|\.\d+)`;
/** A bare number (seconds), or one or more number-unit pairs ("1h30m"), with an optional sign. */
const DURATION = new RegExp(`^([+-]?)(?:(${NUMBER})|((?:${NUMBER}(?:ns|us|µs|μs|ms|s|m|h))+))$`);
const PAIR = new RegExp(`(${NUMBER})(ns|us|µs|μs|ms|s|m|h)`, "g");

/** Seconds → the proto's value: negative is -1 (keep loaded), a fraction rounds up, the top is int32's. */
function toProtoSeconds(seconds: number): number {
  if (seconds < 0) return -1;
  if (seconds === 0) return 0; // "-0s" too
  return Math.min(INT32_MAX, Math.ceil(seconds));
}

/** The seconds a duration string means, or undefined when it is not one. */
function durationSeconds(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (match === null) return undefined;
  const [, sign, bare, pairs] = match;
  let seconds = bare === undefined ? 0 : Number(bare);
  for (const [, amount, unit] of (pairs ?? "").matchAll(PAIR))
    seconds += Number(amount) * (UNIT_SECONDS[unit ?? ""] ?? 0);
  return sign === "-" ? -seconds : seconds;
}

/**
 * The proto's keep_alive_seconds for a request's `keep_alive`: undefined when it is absent or
 * null; `null` when the value is not one of the accepted forms.
 */
export function keepAliveSeconds(value: unknown): number | undefined | null {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? toProtoSeconds(value) : null;
  if (typeof value !== "string") return null;
  const seconds = durationSeconds(value);
  return seconds === undefined ? null : toProtoSeconds(seconds);
}

/** The `keep_alive` field of a request schema: its value as the proto's seconds (undefined when not sent). */
export const keepAliveField = () =>
  z
    .unknown()
    .transform((value, ctx) => {
      const seconds = keepAliveSeconds(value);
      if (seconds !== null) return seconds;
      ctx.addIssue({ code: "custom", message: KEEP_ALIVE_FORMS });
      return z.NEVER;
    })
    .optional();

/** The `keep_alive_seconds` proto field for a parsed body: set only when the request sent one. */
export function keepAliveInit(body: { readonly keep_alive?: number | undefined }): { keepAliveSeconds?: number } {
  return body.keep_alive === undefined ? {} : { keepAliveSeconds: body.keep_alive };
}
