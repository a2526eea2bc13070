// Images and audio in, through llama.cpp's multimodal library (tools/mtmd) that the local build
// links into the addon (sidecar/native/mtmd.patch): a projector (mmproj file) loaded for a model,
// media decoded from a file's bytes, a prompt with media markers cut into text and media chunks, and
// a media chunk evaluated into a sequence. Text chunks are the caller's to evaluate, as tokens.
// Each call runs off the JS thread; a media chunk's decode takes the context's turn with its batches.
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import {
  addonBindings,
  evaluateOutside,
  inContextTurn,
  nativeContext,
  nativeModel,
  sequenceIdOf,
  whileModelKept,
} from "./llama-internals.js";

/** Whether the loaded addon has the multimodal binding, and why not. */
export type ProjectorSupport = { readonly available: true } | { readonly available: false; readonly reason: string };

/** A projector loaded for one model; disposed with it. */
export interface Projector {
  readonly model: LlamaModel;
  readonly supportsVision: boolean;
  readonly supportsAudio: boolean;
  /** PCM samples a second that audio is resampled to; -1 without audio. */
  readonly audioSampleRate: number;
  /** The text that stands for one medium in a prompt (llama.cpp's default: `<__media__>`). */
  readonly marker: string;
  dispose(): Promise<void>;
}

/** An image (RGB) or an audio clip (mono PCM) decoded from a file's bytes. */
export interface Media {
  /** The id given to decodeMedia (a content hash): the media chunk it becomes carries it. */
  readonly id: string;
  readonly width: number;
  readonly height: number;
  readonly isAudio: boolean;
  dispose(): void;
}

/** A part of a tokenized prompt: text tokens, or a medium's positions. */
export type Chunk = { readonly kind: "text"; readonly tokens: readonly Token[]; readonly nPos: number } | MediaChunk;

/** A medium's place in the prompt: its embeddings fill `nTokens` cells over `nPos` positions. */
export interface MediaChunk {
  readonly kind: "image" | "audio";
  readonly nTokens: number;
  readonly nPos: number;
  readonly id: string;
}

/** A prompt cut into chunks, in order; holds the media's embeddings once evaluated, until disposed. */
export interface TokenizedPrompt {
  readonly chunks: readonly Chunk[];
  /** Stops an evaluation running at its next batch and refuses later ones. */
  abort(): void;
  dispose(): void;
}

interface NativeProjector {
  init(): Promise<void>;
  dispose(): Promise<void>;
  readonly supportsVision: boolean;
  readonly supportsAudio: boolean;
  readonly audioSampleRate: number;
  readonly marker: string;
}
interface NativeBitmap {
  decode(projector: NativeProjector, bytes: Buffer, id: string, maxPixels: number): Promise<void>;
  dispose(): void;
  readonly id: string | undefined;
  readonly nx: number;
  readonly ny: number;
  readonly isAudio: boolean;
}
interface NativeChunkInfo {
  readonly type: number;
  readonly nTokens: number;
  readonly nPos: number;
  readonly tokens?: Uint32Array;
  readonly id?: string;
}
interface NativeChunks {
  tokenize(
    projector: NativeProjector,
    text: string,
    bitmaps: NativeBitmap[],
    addSpecial: boolean,
    parseSpecial: boolean,
  ): Promise<void>;
  describe(): NativeChunkInfo[];
  encode(index: number): Promise<void>;
  decodeInto(context: object, index: number, sequenceId: number, nPast: number): Promise<number>;
  abort(): void;
  dispose(): void;
}
interface Classes {
  readonly AddonMtmdProjector: new (model: object, path: string, options: object) => NativeProjector;
  readonly AddonMtmdBitmap: new () => NativeBitmap;
  readonly AddonMtmdChunks: new () => NativeChunks;
}

const CLASS_NAMES = ["AddonMtmdProjector", "AddonMtmdBitmap", "AddonMtmdChunks"] as const;
const MEDIA_KINDS: Record<number, MediaChunk["kind"] | undefined> = { 1: "image", 2: "audio" };

const natives = new WeakMap<object, NativeProjector | NativeBitmap>();
/** Where each media chunk lives: its prompt's native chunks, its index, whether it is encoded. */
const places = new WeakMap<
  MediaChunk,
  { native: NativeChunks; index: number; projector: Projector; encoding?: Promise<void> | undefined }
>();

/** Whether `llama`'s addon binds the multimodal library: only the local build with the engine patches does. */
export function projectorSupport(llama: Llama): ProjectorSupport {
  const bindings = addonBindings(llama);
  const missing = CLASS_NAMES.filter((name) => typeof bindings[name] !== "function");
  if (missing.length === 0) return { available: true };
  return {
    available: false,
    reason:
      "images and audio need the local llama.cpp build with the project's engine patches " +
      "(`npm run build:engine`, then `--engine auto` or `local`): the loaded library has no multimodal binding",
  };
}

function classes(llama: Llama): Classes {
  const support = projectorSupport(llama);
  if (!support.available) throw new Error(support.reason);
  return addonBindings(llama) as unknown as Classes;
}

function nativeOf<T extends NativeProjector | NativeBitmap>(object: Projector | Media): T {
  const native = natives.get(object);
  if (native === undefined) throw new Error("not made by this module");
  return native as T;
}

/**
 * Loads the projector at `path` (an mmproj GGUF) for `model`, on `threads` threads, on the GPU when
 * the model has layers there. Fails when the file is not a projector or does not fit the model.
 */
export async function loadProjector(
  model: LlamaModel,
  path: string,
  options: { readonly threads: number },
): Promise<Projector> {
  const { AddonMtmdProjector } = classes(model.llama);
  const useGpu = model.llama.gpu !== false && model.gpuLayers > 0;
  const native = new AddonMtmdProjector(nativeModel(model), path, { threads: options.threads, useGpu });
  await whileModelKept(model, () => native.init());
  const listener = model.onDispose.createListener(() => void native.dispose());
  const projector: Projector = {
    model,
    supportsVision: native.supportsVision,
    supportsAudio: native.supportsAudio,
    audioSampleRate: native.audioSampleRate,
    marker: native.marker,
    dispose: () => {
      listener.dispose();
      return native.dispose();
    },
  };
  natives.set(projector, native);
  return projector;
}

/**
 * Decodes a medium from a file's bytes (images: JPEG, PNG, GIF's first frame, BMP, TGA, PSD, HDR,
 * PIC, PNM; audio for a projector that takes it: WAV, MP3, FLAC), named `id`. Bytes that decode to
 * nothing reject with an error, never a crash; so does an image over `maxPixels`, read from its header
 * before it is decoded (a small file can hold a huge image).
 */
export async function decodeMedia(
  projector: Projector,
  bytes: Uint8Array,
  id: string,
  options: { readonly maxPixels?: number } = {},
): Promise<Media> {
  const { AddonMtmdBitmap } = classes(projector.model.llama);
  const native = new AddonMtmdBitmap();
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  await whileModelKept(projector.model, () => native.decode(nativeOf(projector), buffer, id, options.maxPixels ?? 0));
  const media: Media = {
    id: native.id ?? id,
    width: native.nx,
    height: native.ny,
    isAudio: native.isAudio,
    dispose: () => native.dispose(),
  };
  natives.set(media, native);
  return media;
}

/**
 * Cuts `text` into chunks, one media chunk in place of each marker (`projector.marker`), the media
 * in order; the media chunks come with the text the model wraps them in (e.g. its image start and
 * end tokens) in the text chunks beside them. `parseSpecial`: special tokens' texts become those tokens.
 */
export async function tokenizeWithMedia(
  projector: Projector,
  text: string,
  media: readonly Media[],
  options: { readonly addSpecial?: boolean; readonly parseSpecial?: boolean } = {},
): Promise<TokenizedPrompt> {
  const { AddonMtmdChunks } = classes(projector.model.llama);
  // The library reports a count that does not match as it reports a medium it cannot prepare: counted here.
  const markers = text.split(projector.marker).length - 1;
  if (markers !== media.length)
    throw new Error(`the text's media markers do not match the media: ${markers} markers, ${media.length} media`);
  const native = new AddonMtmdChunks();
  const bitmaps = media.map((item) => nativeOf<NativeBitmap>(item));
  const { addSpecial = false, parseSpecial = true } = options;
  await whileModelKept(projector.model, () =>
    native.tokenize(nativeOf(projector), text, bitmaps, addSpecial, parseSpecial),
  );
  const chunks = native.describe().map((info, index): Chunk => {
    const kind = MEDIA_KINDS[info.type];
    if (kind === undefined) return { kind: "text", tokens: [...(info.tokens ?? [])] as Token[], nPos: info.nPos };
    const chunk: MediaChunk = { kind, nTokens: info.nTokens, nPos: info.nPos, id: info.id ?? "" };
    places.set(chunk, { native, index, projector });
    return chunk;
  });
  return { chunks, abort: () => native.abort(), dispose: () => native.dispose() };
}

/**
 * Evaluates a media chunk into sequence `sequenceId` of `context` (a context of the projector's
 * model) from position `nPast`; resolves to the position after it. The projector encodes the medium
 * first (once per chunk, the context untouched), then its embeddings are decoded in the context's
 * turn with node-llama-cpp's batches (`inContextTurn`). `signal` aborts the prompt's evaluations; an
 * aborted or failed decode leaves the sequence as it was. The sequence's own record of its tokens is
 * the caller's: `evalMediaIntoSequence` keeps it.
 */
export async function evalMediaChunk(
  context: LlamaContext,
  sequenceId: number,
  chunk: MediaChunk,
  nPast: number,
  signal?: AbortSignal,
): Promise<number> {
  const place = places.get(chunk);
  if (place === undefined) throw new Error("the chunk is not a media chunk of tokenizeWithMedia");
  if (context.model !== place.projector.model) throw new Error("the context is not of the projector's model");
  signal?.throwIfAborted();
  const abort = (): void => place.native.abort();
  signal?.addEventListener("abort", abort, { once: true });
  try {
    // Once per chunk, whichever evaluation comes first (the choices of one prompt share it).
    place.encoding ??= whileModelKept(context.model, () => place.native.encode(place.index));
    await place.encoding.catch((error: unknown) => {
      place.encoding = undefined;
      throw error;
    });
    return await inContextTurn(context, () =>
      place.native.decodeInto(nativeContext(context), place.index, sequenceId, nPast),
    );
  } finally {
    signal?.removeEventListener("abort", abort);
  }
}

/**
 * Evaluates a media chunk at the end of `sequence` and records its positions in the sequence's
 * tokens as `placeholder` (several: one a position, in turn; node-llama-cpp's next evaluation then starts after the
 * medium).
 */
export function evalMediaIntoSequence(
  sequence: LlamaContextSequence,
  chunk: MediaChunk,
  placeholder: Token | readonly Token[],
  signal?: AbortSignal,
): Promise<number> {
  return evaluateOutside(sequence, placeholder, (nPast) =>
    evalMediaChunk(sequence.context, sequenceIdOf(sequence), chunk, nPast, signal),
  );
}
