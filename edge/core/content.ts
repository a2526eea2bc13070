// What a reply is made of, protocol-neutral: a sequence of blocks, each of one kind,
// filled by content deltas: `text` (the answer), `reasoning` (the model's thinking) and
// `tool_call` (one block per call, filled with its JSON argument text). Every protocol
// maps a kind to its own block or item type (Anthropic `text` / `thinking` / `tool_use`
// blocks, Responses `message` / `reasoning` / `function_call` items, chat `content` /
// `reasoning_content` / `tool_calls` deltas).
//
// Encoders never read token text directly: `tokenContent` and `finishContent` turn
// generation events into deltas, and a BlockSequencer turns deltas into
// "open block → deltas → close", one open block at a time, a new block whenever the
// kind changes or a new tool call begins. Non-streaming answers use the same sequencer
// (`collectBlocks`), so a whole answer is by construction what the stream's deltas add up to.
import type { Finish, Token } from "../../proto/gen/inference/v1/inference_pb.js";
import type { GenerationResult } from "../upstream/generation.js";

/** Which tool call a `tool_call` block holds: known from the call's first delta. */
export interface ToolCallInfo {
  /** The call's position among the reply's calls, from 0. */
  readonly index: number;
  readonly id: string;
  readonly name: string;
}

/** A piece of the reply. */
export type ContentDelta =
  | {
      readonly kind: "text" | "reasoning";
      /** Text to append to the current block of this kind; never empty. */
      readonly text: string;
    }
  | {
      readonly kind: "tool_call";
      /** Argument text to append; empty only on the delta that begins a call. */
      readonly text: string;
      /** Set on the delta that begins a call: it opens a new block. */
      readonly call?: ToolCallInfo;
    };

export type ContentKind = ContentDelta["kind"];

/** One block of the reply, as far as it has been generated. */
export interface Block {
  readonly kind: ContentKind;
  /** Position among the reply's blocks, from 0. */
  readonly index: number;
  /** Everything streamed into the block so far (for a tool call: its argument JSON). */
  text: string;
  /** The call a `tool_call` block holds. */
  readonly call?: ToolCallInfo;
}

/**
 * A token's content, in the order the proto defines (reasoning, text, tool-call fragments);
 * nothing for parts that are empty (held back mid-character or as a possible stop).
 */
export function tokenContent(token: Token): ContentDelta[] {
  if (token.reasoning === "" && token.toolCalls.length === 0) {
    return token.text === "" ? [] : [{ kind: "text", text: token.text }];
  }
  const out: ContentDelta[] = [];
  if (token.reasoning !== "") out.push({ kind: "reasoning", text: token.reasoning });
  if (token.text !== "") out.push({ kind: "text", text: token.text });
  for (const delta of token.toolCalls) {
    if (delta.id !== "") {
      out.push({
        kind: "tool_call",
        text: delta.arguments,
        call: { index: delta.index, id: delta.id, name: delta.name },
      });
    } else if (delta.arguments !== "") {
      out.push({ kind: "tool_call", text: delta.arguments });
    }
  }
  return out;
}

/** What the sidecar held back to the end (`Finish.reasoning`, `Finish.text`), sent before the terminal frames. */
export function finishContent(finish: Finish): ContentDelta[] {
  const out: ContentDelta[] = [];
  if (finish.reasoning !== "") out.push({ kind: "reasoning", text: finish.reasoning });
  if (finish.text !== "") out.push({ kind: "text", text: finish.text });
  return out;
}

/** A protocol's frames for a block's life: opened, added to, closed. */
export interface BlockFrames<F> {
  open(block: Block): F[];
  delta(block: Block, text: string): F[];
  close(block: Block): F[];
}

const NO_FRAMES: BlockFrames<never> = { open: () => [], delta: () => [], close: () => [] };

export class BlockSequencer<F> {
  /** Every block opened so far, in order (the last may still be open). */
  readonly blocks: Block[] = [];
  #open: Block | undefined;
  readonly #frames: BlockFrames<F>;

  constructor(frames: BlockFrames<F>) {
    this.#frames = frames;
  }

  /** The block deltas currently go to, if one is open. */
  get open(): Block | undefined {
    return this.#open;
  }

  /**
   * Adds a delta: closes the open block if its kind differs or a new tool call begins, opens
   * one if none is open. Argument text without a call to belong to is dropped (the sidecar
   * always begins a call first).
   */
  push(delta: ContentDelta): F[] {
    const frames: F[] = [];
    const call = delta.kind === "tool_call" ? delta.call : undefined;
    if (this.#open !== undefined && (this.#open.kind !== delta.kind || call !== undefined))
      frames.push(...this.close());
    let block = this.#open;
    if (block === undefined) {
      if (delta.kind === "tool_call" && call === undefined) return frames;
      block = { kind: delta.kind, index: this.blocks.length, text: "", ...(call !== undefined ? { call } : {}) };
      this.blocks.push(block);
      this.#open = block;
      frames.push(...this.#frames.open(block));
    }
    if (delta.text === "") return frames;
    block.text += delta.text;
    frames.push(...this.#frames.delta(block, delta.text));
    return frames;
  }

  pushAll(deltas: readonly ContentDelta[]): F[] {
    return deltas.flatMap((delta) => this.push(delta));
  }

  /** Closes the open block, if any. */
  close(): F[] {
    const block = this.#open;
    if (block === undefined) return [];
    this.#open = undefined;
    return this.#frames.close(block);
  }
}

/** The blocks of a whole generation (non-streaming answers), of the deltas `keep` lets through. */
export function collectBlocks(result: GenerationResult, keep: (delta: ContentDelta) => boolean = () => true): Block[] {
  const sequencer = new BlockSequencer(NO_FRAMES);
  for (const token of result.tokens) sequencer.pushAll(tokenContent(token).filter(keep));
  sequencer.pushAll(finishContent(result.finish).filter(keep));
  sequencer.close();
  return sequencer.blocks;
}
