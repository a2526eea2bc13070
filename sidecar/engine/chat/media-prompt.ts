// A chat's media made ready for its prompt: each media part decoded by the model's projector (named by the SHA-256 of
// its bytes), cut into the chunks the model reads it as (the text it wraps a medium in, and the medium's positions),
// and its positions given placeholder tokens drawn from that hash. The prompt's tokens hold the placeholders where a
// medium stands, so the prefix cache, the KV tier and the sequence pool compare media by content: the same image sent
// again matches and is not evaluated again; another one never reuses its cells. Placeholders lie above the
// vocabulary, so no sampler or draft ever reads them as text.
import { createHash, randomBytes } from "node:crypto";
import { LlamaText, type LlamaTextValue, type Token } from "node-llama-cpp";
import sharp from "sharp";
import type { Chat } from "../../../proto/gen/inference/v1/inference_pb.js";
import { errorText, invalidArgument } from "../engine-errors.js";
import type { LoadedModel } from "../llama/model.js";
import { decodeMedia, tokenizeWithMedia, type MediaChunk } from "../llama/multimodal.js";
import { MAX_MEDIA_PARTS, partName } from "./media-parts.js";

/** The largest image a media part may hold, in pixels (read from its header before it is decoded). */
export const MAX_MEDIA_PIXELS = 50_000_000;

/** One medium of the prompt: its tokens (the model's wrapping text around its placeholders). */
export interface MediaPiece {
  readonly tokens: readonly Token[];
  /** Where its placeholders start within `tokens`. */
  readonly at: number;
  readonly chunk: MediaChunk;
  /** Its positions' placeholders (placeholdersOf). */
  readonly placeholders: readonly Token[];
}

/** A chat's media, ready: the marker that stands for each in the rendered text, and the pieces in order. */
export interface PreparedMedia {
  readonly marker: string;
  readonly pieces: readonly MediaPiece[];
  dispose(): void;
}

/** A medium's place in the prompt's tokens. */
export interface MediaSpan {
  readonly start: number;
  readonly chunk: MediaChunk;
  readonly placeholders: readonly Token[];
}

/**
 * A medium's placeholders, one a position: above the vocabulary, each position 30 bits of its content hash in turn
 * (eight positions compare 240 bits, so two images' cells are told apart as surely as their hashes are).
 */
function placeholdersOf(hash: Buffer, vocabularySize: number, positions: number): Token[] {
  return Array.from(
    { length: positions },
    (_, i) => (vocabularySize + (hash.readUInt32BE((i % 8) * 4) & 0x3fffffff)) as Token,
  );
}

type Found = { readonly message: number; readonly part: number; readonly data: Uint8Array };

function mediaOf(chat: Chat): Found[] {
  return chat.messages.flatMap((m, message) =>
    m.parts.flatMap((p, part) => (p.part.case === "media" ? [{ message, part, data: p.part.value.data }] : [])),
  );
}

/** A medium decoded and cut into the chunks the model reads it as; refused naming its part. */
async function pieceOf(loaded: LoadedModel, found: Found, held: { dispose(): void }[]): Promise<MediaPiece> {
  const projector = loaded.media.projector;
  const name = partName(found.message, found.part);
  if (projector === undefined) throw invalidArgument(`model "${loaded.id}" ${loaded.media.refusal}: ${name} is media`);
  const hash = createHash("sha256").update(found.data).digest();
  const unreadable = (error: unknown): never => {
    throw invalidArgument(`${name} could not be read as an image or a sound: ${errorText(error)}`);
  };
  const bytes = await readableBytes(found.data).catch(unreadable);
  const media = await decodeMedia(projector, bytes, hash.toString("hex"), { maxPixels: MAX_MEDIA_PIXELS }).catch(
    unreadable,
  );
  held.push(media);
  if (media.isAudio ? !projector.supportsAudio : !projector.supportsVision)
    throw invalidArgument(`model "${loaded.id}" does not read ${media.isAudio ? "sound" : "images"}: ${name}`);
  const prompt = await tokenizeWithMedia(projector, projector.marker, [media], { parseSpecial: true });
  held.push(prompt);
  const tokens: Token[] = [];
  let medium: { at: number; chunk: MediaChunk; placeholders: Token[] } | undefined;
  for (const chunk of prompt.chunks) {
    if (chunk.kind === "text") tokens.push(...chunk.tokens);
    else {
      if (chunk.nPos !== chunk.nTokens)
        throw invalidArgument(`model "${loaded.id}" places media by position (M-RoPE), which is not served: ${name}`);
      medium = { at: tokens.length, chunk, placeholders: placeholdersOf(hash, loaded.vocabularySize, chunk.nPos) };
      tokens.push(...medium.placeholders);
    }
  }
  if (medium === undefined) throw invalidArgument(`${name} gave the model nothing to read`);
  return { tokens, ...medium };
}

/** Whether `data` is a WebP file (RIFF....WEBP), which llama.cpp's image decoder does not read. */
function isWebp(data: Uint8Array): boolean {
  const ascii = (from: number, to: number) => Buffer.from(data.subarray(from, to)).toString("latin1");
  return data.length >= 12 && ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP";
}

/** Bytes the projector's decoder reads: a WebP file (its first frame) as PNG, anything else as it is. */
async function readableBytes(data: Uint8Array): Promise<Uint8Array> {
  if (!isWebp(data)) return data;
  return sharp(data, { limitInputPixels: MAX_MEDIA_PIXELS }).png().toBuffer();
}

/** The chat's media made ready (undefined without media); refused naming the part that cannot be. */
export async function prepareMedia(loaded: LoadedModel, chat: Chat): Promise<PreparedMedia | undefined> {
  const found = mediaOf(chat);
  if (found.length === 0) return undefined;
  if (found.length > MAX_MEDIA_PARTS)
    throw invalidArgument(`the request holds ${found.length} media parts: at most ${MAX_MEDIA_PARTS} are allowed`);
  const held: { dispose(): void }[] = [];
  const dispose = (): void => {
    for (const item of held.splice(0)) item.dispose();
  };
  try {
    const pieces: MediaPiece[] = [];
    for (const item of found) pieces.push(await pieceOf(loaded, item, held));
    return { marker: `<__media_${randomBytes(8).toString("hex")}__>`, pieces, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}

/**
 * The rendered prompt's tokens with its media: `segments` are the prompt cut at the markers (a template's text, or a
 * chat wrapper's LlamaText through `cutAtMarker`), each tokenized by `tokenize` (`first`: the one before the first
 * medium), each marker replaced by its piece; INVALID_ARGUMENT when the prompt did not place every medium once.
 */
export function spliceMedia<Text>(
  segments: readonly Text[],
  media: PreparedMedia,
  tokenize: (segment: Text, first: boolean) => Token[],
): { tokens: Token[]; spans: MediaSpan[] } {
  if (segments.length !== media.pieces.length + 1)
    throw invalidArgument("the model's chat template did not place every media part in the prompt once");
  const tokens: Token[] = [];
  const spans: MediaSpan[] = [];
  segments.forEach((segment, i) => {
    tokens.push(...tokenize(segment, i === 0));
    const piece = media.pieces[i];
    if (piece === undefined) return;
    spans.push({ start: tokens.length + piece.at, chunk: piece.chunk, placeholders: piece.placeholders });
    tokens.push(...piece.tokens);
  });
  return { tokens, spans };
}

/** A chat wrapper's prompt cut at `marker`, which only ever stands in its plain text (a message's content). */
export function cutAtMarker(text: LlamaText, marker: string): LlamaText[] {
  const segments: LlamaTextValue[][] = [[]];
  for (const value of text.values) {
    if (typeof value !== "string") {
      segments.at(-1)?.push(value);
      continue;
    }
    value.split(marker).forEach((piece, i) => {
      if (i > 0) segments.push([]);
      if (piece !== "") segments.at(-1)?.push(piece);
    });
  }
  return segments.map((values) => LlamaText(values));
}
