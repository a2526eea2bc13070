// Model names as Ollama's clients write them: `name:tag`, where `name` alone means `name:latest`. A
// catalogued id or alias is matched as written (a preset may call a model `qwen3:8b`); `:latest` is
// dropped, so `demo:latest` reaches the model `demo`, and the lists name a model without a tag
// `demo:latest`, as Ollama lists it.

const LATEST = ":latest";

/** The catalogue name a client's model name asks for. */
export function ollamaModelName(name: string): string {
  return name.endsWith(LATEST) ? name.slice(0, -LATEST.length) : name;
}

/** A catalogued id or alias as Ollama's lists write it. */
export function ollamaTag(name: string): string {
  return name.includes(":") ? name : `${name}${LATEST}`;
}

/**
 * The sidecar's address of a model a client pulls by address: `hf.co/<user>/<repo>[:<quant>]` (how Ollama's clients
 * name Hugging Face models) as `hf:<user>/<repo>[:<quant>]`; `hf:…` and http(s) URLs as written; undefined for a
 * name that is no address.
 */
export function modelAddress(name: string): string | undefined {
  const hub = /^(?:hf\.co|huggingface\.co)\/(.+)$/i.exec(ollamaModelName(name));
  if (hub?.[1] !== undefined) return `hf:${hub[1]}`;
  return /^(hf:|huggingface:|https?:\/\/)/i.test(name) ? name : undefined;
}
