import { llamaSource } from "../../gguf/llama-source.js";
import { ensureModels, FAMILY_TWINS } from "../../gguf/models.js";

/**
 * Extracts llama.cpp's templates and vocabularies once, then writes the test models once per run
 * (each a no-op when up to date), the family, ranking and embedding twins among them: not in every test file at once.
 */
export default async function setup(): Promise<void> {
  llamaSource();
  await ensureModels("models", [
    "demo",
    "scripted",
    "tools",
    "random-tiny",
    "rerank",
    "random-60m",
    ...FAMILY_TWINS,
    "qwen3-reranker",
    "qwen3-embedding",
    "qwen2.5-coder",
    // test/e2e/ollama.test.ts's catalogue names it without writing it.
    "thinking",
  ]);
}
