// The catalogue (sidecar/catalogue/model-catalogue.ts) and the presets file (presets.ts): which models
// are served under which names, which entry a request's model name reaches, and the messages that
// stop the start for a bad presets file, a name used twice or an unknown --default-model.
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { buildCatalogue, nameOf, type CatalogueSources } from "../../sidecar/catalogue/model-catalogue.js";
import { parsePresets } from "../../sidecar/catalogue/presets.js";

const FILE = "--models-preset presets.json";
const parse = (value: unknown) => parsePresets(JSON.stringify(value), FILE);
const folder = (names: string[]) => () => names;
const sources = (more: Partial<CatalogueSources> = {}): CatalogueSources => ({
  models: [],
  folder: "models",
  serveFolder: false,
  ...more,
});

describe("parsePresets", () => {
  it("takes each model's options, an alias as a string or a list", () => {
    const presets = parse({
      coder: {
        model: "hf:user/repo/coder.Q4.gguf",
        contextSize: 8192,
        sequences: 2,
        chatTemplate: "chatML",
        gpuLayers: "max",
        alias: "code",
        fimOrder: "suffix-prefix-middle",
      },
      tools: {
        contextSize: "auto",
        gpuLayers: 0,
        alias: ["helper", "t"],
        chatTemplate: "{% for m in messages %}{{ m.content }}{% endfor %}",
      },
    });
    expect(presets).toEqual({
      coder: {
        model: "hf:user/repo/coder.Q4.gguf",
        contextSize: 8192,
        sequences: 2,
        chatTemplate: "chatML",
        gpuLayers: "max",
        alias: ["code"],
        fimOrder: "suffix-prefix-middle",
      },
      tools: {
        contextSize: "auto",
        gpuLayers: 0,
        alias: ["helper", "t"],
        chatTemplate: "{% for m in messages %}{{ m.content }}{% endfor %}",
      },
    });
  });

  it.each([
    ["not JSON", "{", /^--models-preset presets\.json is not JSON: /],
    ["a list", "[]", /must hold a JSON object keyed by model name/],
    [
      "an entry that is no object",
      '{"a": 3}',
      new RegExp(
        '"a" must be an object of options \\(model, contextSize, sequences, chatTemplate, gpuLayers, alias, ' +
          "specLookup, draft, mmproj, fimOrder, lora\\)",
      ),
    ],
    ["an unknown key", '{"a": {"ctx": 512}}', /"a" has an unknown key "ctx" \(known: model, contextSize/],
    [
      "a context size too small",
      '{"a": {"contextSize": 8}}',
      /"a"\.contextSize must be "auto" or an integer of at least 16/,
    ],
    ["sequences of 0", '{"a": {"sequences": 0}}', /"a"\.sequences must be an integer of at least 1/],
    [
      "an empty draft",
      '{"a": {"draft": ""}}',
      /"a"\.draft must be a non-empty string \(a path, a name in the models folder/,
    ],
    [
      "a fractional GPU layer count",
      '{"a": {"gpuLayers": 1.5}}',
      /"a"\.gpuLayers must be "auto", "max" or a number of layers/,
    ],
    [
      "an unknown chat template name",
      '{"a": {"chatTemplate": "chatml2"}}',
      /"a"\.chatTemplate must be a chat wrapper name \(.*chatML.*\) or a Jinja template/,
    ],
    ["an empty alias", '{"a": {"alias": [""]}}', /"a"\.alias must be a non-empty string or a list of them/],
    ["an empty model", '{"a": {"model": ""}}', /"a"\.model must be a non-empty string/],
    ["an empty name", '{" ": {}}', /a model name is empty/],
    ["a draft too long", '{"a": {"specLookup": 33}}', /"a"\.specLookup must be an integer from 0 to 32/],
    ["an unknown FIM order", '{"a": {"fimOrder": "spm"}}', /"a"\.fimOrder must be "prefix-suffix-middle" or/],
    [
      "a LoRA adapter without a path",
      '{"a": {"lora": {"p": {"scale": 1}}}}',
      /"a"\.lora must be an object of adapters/,
    ],
    ["a LoRA scale that is no number", '{"a": {"lora": {"p": {"path": "p.gguf", "scale": "1"}}}}', /\("p" is not\)/],
  ])("refuses %s, naming the file and the key", (_name, text, message) => {
    expect(() => parsePresets(text, FILE)).toThrow(message);
  });
});

describe("nameOf", () => {
  it("names a model by its file name, a remote one without a file name by its address", () => {
    expect(nameOf("/srv/models/Qwen3-8B-Q4_K_M.gguf")).toBe("Qwen3-8B-Q4_K_M");
    expect(nameOf("tools")).toBe("tools");
    expect(nameOf("hf:user/repo/model.Q4.gguf")).toBe("model.Q4");
    expect(nameOf("hf:user/repo:Q4_K_M")).toBe("user/repo:Q4_K_M");
    expect(nameOf("https://example.com/files/served.gguf?download=1")).toBe("served");
  });
});

describe("buildCatalogue", () => {
  it("holds every --model, each preset with a model, then the folder's files when the folder was given", () => {
    const presets = parse({ coder: { model: "hf:user/repo:Q4_K_M", alias: "code" }, tools: { contextSize: 512 } });
    const catalogue = buildCatalogue(
      sources({ models: ["/srv/demo.gguf", "tools"], presets, serveFolder: true }),
      folder(["a", "tools", "demo", "z"]),
    );
    expect(catalogue.entries.map((e) => [e.name, e.source, e.aliases])).toEqual([
      ["demo", "/srv/demo.gguf", []],
      ["tools", "tools", []],
      ["coder", "hf:user/repo:Q4_K_M", ["code"]],
      ["a", "models/a.gguf", []],
      ["z", "models/z.gguf", []],
    ]);
    expect(catalogue.find("tools")?.preset).toEqual({ contextSize: 512 });
  });

  it(
    "leaves the default folder's files out unless it was given; with nothing given, the fallback (the demo model) " +
      "alone",
    () => {
      expect(buildCatalogue(sources({ models: ["x.gguf"] }), folder(["a", "b"])).entries.map((e) => e.name)).toEqual([
        "x",
      ]);
      expect(
        buildCatalogue(sources({ fallback: "models/demo.gguf" }), folder(["a", "b"])).entries.map((e) => e.name),
      ).toEqual(["demo"]);
      expect(
        buildCatalogue(sources({ fallback: "models/demo.gguf", modelId: "local" })).entries.map((e) => e.name),
      ).toEqual(["local"]);
      expect(() => buildCatalogue(sources({ serveFolder: true }), folder([]))).toThrow(
        "no model to serve: --models-dir models holds no .gguf file",
      );
    },
  );

  it("names the one --model by --model-id, and refuses --model-id with several", () => {
    expect(buildCatalogue(sources({ models: ["/srv/x.gguf"], modelId: "my-model" })).entries[0]?.name).toBe("my-model");
    expect(() => buildCatalogue(sources({ models: ["a.gguf", "b.gguf"], modelId: "m" }))).toThrow(
      /--model-id names a single --model/,
    );
  });

  it.each([
    [
      "two models of one name",
      { models: ["/a/x.gguf", "/b/x.gguf"] },
      /two models are named "x" \(\/a\/x\.gguf, \/b\/x\.gguf\)/,
    ],
    [
      "a preset naming no model",
      { models: ["x.gguf"], presets: { y: { contextSize: 512 } } },
      /"y" is no model of the catalogue \(x\) and has no "model"/,
    ],
    [
      "an alias that is another model's name",
      { models: ["x.gguf", "y.gguf"], presets: { y: { alias: ["x"] } } },
      /"x" names both "x" and "y"/,
    ],
    [
      "an adapter named like a model",
      { models: ["x.gguf", "y.gguf"], presets: { y: { lora: { x: { path: "x-lora.gguf" } } } } },
      /"x" names both "x" and "y"/,
    ],
    [
      "--lora with several --model",
      { models: ["x.gguf", "y.gguf"], lora: [{ name: "p", path: "p.gguf", scale: 1 }] },
      /--lora names adapters of the one --model/,
    ],
    [
      "an unknown --default-model",
      { models: ["x.gguf", "y.gguf"], defaultModel: "z" },
      /--default-model z is not in the catalogue \(x, y\)/,
    ],
  ])("refuses %s", (_name, more, message) => {
    expect(() => buildCatalogue(sources(more as Partial<CatalogueSources>))).toThrow(message);
  });
});

describe("LoRA adapters in the catalogue", () => {
  it("gives the one --model its --lora adapters and a preset's, found by name (their base serves them)", () => {
    const presets = parse({ x: { lora: { french: { path: "fr.gguf" } } }, y: { model: "y.gguf" } });
    const catalogue = buildCatalogue(
      sources({ models: ["/srv/x.gguf"], presets, lora: [{ name: "pirate", path: "p.gguf", scale: 0.5 }] }),
    );
    expect(catalogue.entries.map((e) => [e.name, e.adapters])).toEqual([
      [
        "x",
        [
          { name: "pirate", source: "p.gguf", scale: 0.5 },
          { name: "french", source: "fr.gguf", scale: 1 },
        ],
      ],
      ["y", []],
    ]);
    expect([catalogue.resolve("pirate").name, catalogue.find("french")?.name, catalogue.adapter("y")]).toEqual([
      "x",
      "x",
      undefined,
    ]);
  });
});

describe("Catalogue.resolve", () => {
  const codeOf = (run: () => unknown) => {
    try {
      run();
      return "ok";
    } catch (error) {
      return error instanceof ConnectError ? `${Code[error.code]}: ${error.rawMessage}` : String(error);
    }
  };

  it("with one model, any name reaches it", () => {
    const catalogue = buildCatalogue(sources({ models: ["x.gguf"] }));
    for (const name of ["x", "gpt-4o", ""]) expect(catalogue.resolve(name).name).toBe("x");
  });

  it(
    "with several: the name or an alias; an empty name the first; an unknown name NOT_FOUND naming the " + "catalogue",
    () => {
      const catalogue = buildCatalogue(sources({ models: ["x.gguf", "y.gguf"], presets: { y: { alias: ["why"] } } }));
      expect([catalogue.resolve("y").name, catalogue.resolve("why").name, catalogue.resolve("").name]).toEqual([
        "y",
        "y",
        "x",
      ]);
      expect(codeOf(() => catalogue.resolve("z"))).toBe('NotFound: model "z" is not served here (served: x, y)');
    },
  );

  it("--default-model serves unknown and empty names", () => {
    const catalogue = buildCatalogue(sources({ models: ["x.gguf", "y.gguf"], defaultModel: "y" }));
    expect([catalogue.resolve("z").name, catalogue.resolve("").name, catalogue.resolve("x").name]).toEqual([
      "y",
      "y",
      "x",
    ]);
  });
});
