// What a model's reply looks like, as its chat template writes an assistant turn: how reasoning is
// marked, which markers wrap or end the answer, and how tool calls are written (`ReplySyntax`).
import type { Pattern } from "./pattern.js";

/** How one call's arguments are written after its name. */
export type ArgumentsSyntax =
  /** A JSON object (`{"city": "Tokyo"}`). */
  | { readonly kind: "json" }
  /**
   * One tagged pair per argument (`<parameter=city>\nTokyo\n</parameter>`): `keyOpen`, the key,
   * `keyClose`, the value, `valueClose` (which may name the key, `«key»`). A value is a string when
   * the tool's schema says so, or when `keyClose`'s `«word»` is one of `stringWords`; otherwise
   * JSON where it parses as JSON.
   */
  | {
      readonly kind: "tagged";
      readonly keyOpen: readonly Pattern[];
      readonly keyClose: readonly Pattern[];
      readonly valueClose: readonly Pattern[];
      readonly stringWords?: readonly string[];
      /** The marker before every tag of a value written as tags (objects as `<key>` members, arrays as `<item>`s). */
      readonly nested?: string;
    }
  /** Gemma 4's object notation: bare keys, strings between `<|"|>` markers (`{city:<|"|>Tokyo<|"|>}`). */
  | { readonly kind: "gemma" };

/**
 * How a reply writes tool calls: `open` once before the first call (none: each call stands alone),
 * then each call as `callOpen`, its name, `nameEnd`, its arguments and `callClose`, calls apart by
 * `between`, and `close` after the last. Each is a list of alternatives, the first the one the
 * template writes.
 */
export interface CallSyntax {
  /** The family the syntax is named after (`hermes`, `qwen3-coder`, `kimi-k2`, …). */
  readonly family: string;
  readonly open: readonly Pattern[];
  readonly callOpen: readonly Pattern[];
  readonly nameEnd: readonly Pattern[];
  readonly arguments: ArgumentsSyntax;
  readonly callClose: readonly Pattern[];
  readonly between: readonly Pattern[];
  readonly close: readonly Pattern[];
  /** Whether one reply may hold several calls. */
  readonly parallel: boolean;
  /**
   * Call ids as the family's template writes them in history, where it names them its own way (Kimi's
   * `functions.name:index`).
   */
  readonly ids?: CallIdForm;
}

/**
 * How a family's template wants the call ids of a history: `functions-index` — Kimi K2's
 * `functions.<name>:<index within the turn>`, which its template writes as the call's header and a
 * result must name. (Templates that want 9 letters and digits, Mistral's, refuse other ids: those are
 * found by the refusal, template-prompt.ts.)
 */
export type CallIdForm = "functions-index";

/** How reasoning is marked: between `open` and `close` (`<think>` … `</think>`). */
export interface ReasoningSyntax {
  readonly open: string;
  readonly close: string;
  /** The close as the template writes it after reasoning, with the whitespace before it (`\n</think>`). */
  readonly closeWritten?: string;
}

export interface ReplySyntax {
  readonly reasoning: ReasoningSyntax | undefined;
  /** Markers around the answer that are no part of it (`<|START_RESPONSE|>`, `<|channel|>final<|message|>`). */
  readonly strip: readonly string[];
  /** Markers that end the turn (`<|im_end|>`, `<|END_OF_TURN_TOKEN|>`): nothing after one is read. */
  readonly end: readonly string[];
  /** Undefined when the template writes no tool calls this project can read (`refused` says why). */
  readonly calls: CallSyntax | undefined;
  /** Why calls are not served, when they are not. */
  readonly refused: string | undefined;
  /**
   * The template writes calls but shows the model no offered tool (DeepSeek R1's distills): the chat layer lists them.
   */
  readonly toolsUnlisted?: true;
}
