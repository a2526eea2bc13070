// What a reply is made of, protocol-neutral: a sequence of blocks, each of one kind,
// filled by content deltas. Today the sidecar streams only text; reasoning and tool
// calls will be more kinds (each with its own delta text: thinking text, argument
// JSON), and every protocol maps a kind to its own block or item type (Anthropic
// `text` / `thinking` / `tool_use` blocks, Responses `message` / `reasoning` /
// `function_call` items, chat `content` / `reasoning_content` / `tool_calls` deltas).
//
// Encoders never read token text directly: `tokenContent` and `finishContent` turn
// generation events into deltas, and a BlockSequencer turns deltas into
// "open block → deltas → close", one open block at a time, a new block whenever the
// kind changes. Non-streaming answers use the same sequencer (`collectBlocks`), so a
// whole answer is by construction what the stream's deltas add up to.
import type { Finish, Token } from "../proto/gen/inference/v1/inference_pb.js";
import type { GenerationResult } from "./generation.js";

/** A piece of the reply. Thinking and tool-call kinds join this union with issue 4. */
export interface ContentDelta {
  readonly kind: "text";
  /** Text to append to the current block of this kind; never empty. */
  readonly text: string;
}

export type ContentKind = ContentDelta["kind"];

/** One block of the reply, as far as it has been generated. */
export interface Block {
  readonly kind: ContentKind;
  /** Position among the reply's blocks, from 0. */
  readonly index: number;
  /** Everything streamed into the block so far. */
  text: string;
}

/** A token's content: nothing when its text is empty (held back mid-character or as a possible stop). */
export function tokenContent(token: Token): ContentDelta[] {
  return token.text === "" ? [] : [{ kind: "text", text: token.text }];
}

/** The text the sidecar held back to the end (`Finish.text`): content like any other, sent before the terminal frames. */
export function finishContent(finish: Finish): ContentDelta[] {
  return finish.text === "" ? [] : [{ kind: "text", text: finish.text }];
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

  /** Adds a delta: closes the open block if its kind differs, opens one if none is open. */
  push(delta: ContentDelta): F[] {
    const frames: F[] = [];
    if (this.#open !== undefined && this.#open.kind !== delta.kind) frames.push(...this.close());
    let block = this.#open;
    if (block === undefined) {
      block = { kind: delta.kind, index: this.blocks.length, text: "" };
      this.blocks.push(block);
      this.#open = block;
      frames.push(...this.#frames.open(block));
    }
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

/** The blocks of a whole generation (non-streaming answers). */
export function collectBlocks(result: GenerationResult): Block[] {
  const sequencer = new BlockSequencer(NO_FRAMES);
  for (const token of result.tokens) sequencer.pushAll(tokenContent(token));
  sequencer.pushAll(finishContent(result.finish));
  sequencer.close();
  return sequencer.blocks;
}
