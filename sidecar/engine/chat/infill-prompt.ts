// A fill-in-the-middle request's prompt tokens (proto: Infill): the repository context, then the
// prefix, the suffix and the middle token in the model's order, every text tokenized as plain text,
// cut to fit as llama-server cuts its /infill prompts.
import type { Token } from "node-llama-cpp";
import type { Infill } from "../../../proto/gen/inference/v1/inference_pb.js";
import { fillInMiddleUnsupported } from "../engine-errors.js";
import { missingFimTokens, type FimTokens } from "../llama/fim-tokens.js";
import type { LoadedModel } from "../llama/model.js";

/** How a fill-in-the-middle reply ends besides its tokens (proto: Infill.min_indent, time_limit_ms; 0: no rule). */
export interface LineRules {
  readonly minIndent: number;
  readonly timeLimitMs: number;
}

/** The project's name in the repository context, and the current file's name, as llama-server writes them. */
const PROJECT = "myproject\n";
const CURRENT_FILE = "filename\n";
/** What separates files for a model without FIM_SEP (so that no control-looking text reaches it). */
const SNIPPET = "\n\n--- snippet ---\n\n";

/** Plain text's tokens: special-token text stays text, no beginning-of-sequence token. */
const plain = (loaded: LoadedModel, text: string): Token[] => loaded.model.tokenize(text, false);

/** The model's FIM tokens, or INVALID_ARGUMENT saying which it lacks (with a FillInMiddleUnsupported detail). */
export function fimTokensFor(loaded: LoadedModel): FimTokens {
  if (loaded.fim !== undefined) return loaded.fim;
  throw fillInMiddleUnsupported(loaded.id, missingFimTokens(loaded.model));
}

/**
 * The repository context: FIM_REP and the project, then each file after FIM_SEP (or a snippet line), the current
 * file last.
 */
function repositoryTokens(loaded: LoadedModel, fim: FimTokens, infill: Infill): Token[] {
  const out: Token[] = [];
  if (fim.repo !== undefined) out.push(fim.repo, ...plain(loaded, PROJECT));
  for (const file of infill.files) {
    if (fim.fileSeparator !== undefined)
      out.push(fim.fileSeparator, ...plain(loaded, `${file.filename === "" ? "tmp" : file.filename}\n`));
    else out.push(...plain(loaded, SNIPPET));
    out.push(...plain(loaded, file.text));
  }
  if (fim.fileSeparator !== undefined) out.push(fim.fileSeparator, ...plain(loaded, CURRENT_FILE));
  return out;
}

/**
 * The most tokens prefix and suffix take together: llama-server's default batch (2,048, its window),
 * or half the context when that is less.
 */
const WINDOW = 2048;
/** The prompt's tokens that are none of the texts: BOS, FIM_PRE, FIM_SUF, FIM_MID. */
const FIM_TOKENS = 4;

/**
 * The whole prompt. The prefix keeps its last 3/4 of the window and the suffix its first quarter
 * less the prompt's tokens; the files (their last tokens) take what the context has left after the
 * window, the FIM tokens and a quarter window for the middle, before the prefix. That room is the
 * same whatever the request's max_tokens (llama-server's leaves twice n_predict): a warm-up request
 * (n_predict 0) and the completions after it then open with the same tokens, which the cache keeps.
 * A beginning-of-sequence token, where the vocabulary adds one, comes first.
 */
export function infillTokens(loaded: LoadedModel, infill: Infill): Token[] {
  const fim = fimTokensFor(loaded);
  const window = Math.min(WINDOW, Math.floor(loaded.contextSize / 2));
  const prompt = plain(loaded, infill.prompt);
  const prefix = plain(loaded, infill.prefix);
  const suffix = plain(loaded, infill.suffix);
  const prefixTake = Math.min(prefix.length, 3 * Math.floor(window / 4));
  const suffixTake = Math.min(suffix.length, Math.max(0, Math.floor(window / 4) - (2 + prompt.length)));
  const before = [fim.prefix, ...prefix.slice(prefix.length - prefixTake), ...prompt];
  const after = [fim.suffix, ...suffix.slice(0, suffixTake)];
  const [first, second] = fim.order === "prefix-suffix-middle" ? [before, after] : [after, before];
  const repository = repositoryTokens(loaded, fim, infill);
  const room = loaded.contextSize - window - FIM_TOKENS - Math.floor(window / 4);
  const extraTake = Math.min(repository.length, Math.max(0, room));
  const { bos } = loaded.model.tokens;
  const start = bos !== null && loaded.model.tokens.shouldPrependBosToken ? [bos] : [];
  // The beginning-of-sequence token opens the sequence (llama-server puts the files before it).
  return [...start, ...repository.slice(repository.length - extraTake), ...first, ...second, fim.middle];
}
