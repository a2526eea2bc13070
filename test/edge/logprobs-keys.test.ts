// How token pieces are shown in logprobs: whole UTF-8 as its text, anything else as OpenAI's API
// shows it (`bytes:\xNN`), and legacy `top_logprobs` keys that never merge two distinct tokens
// (a text already taken falls back to the `bytes:` form, then to `token:<id>`).
import { describe, expect, it } from "vitest";
import { distinctKeys, pieceText } from "../../edge/protocols/openai-common/logprobs.js";
import { post, testApp } from "../support/app.js";
import { finish, start, token } from "../support/fake-sidecar.js";

const bytes = (...values: number[]) => new Uint8Array(values);

describe("pieceText", () => {
  it("is the text of whole UTF-8 and bytes:\\xNN (lower-case hex) otherwise", () => {
    expect(pieceText(new TextEncoder().encode(" Once"))).toBe(" Once");
    expect(pieceText(bytes(0xf0, 0x9f, 0xa6, 0x99))).toBe("🦙");
    expect(pieceText(bytes())).toBe("");
    expect(pieceText(bytes(0xf0))).toBe("bytes:\\xf0");
    expect(pieceText(bytes(0xf0, 0x9f))).toBe("bytes:\\xf0\\x9f");
    // Part of a character after whole ones: the whole piece is shown as bytes.
    expect(pieceText(bytes(0x20, 0xa6, 0x99))).toBe("bytes:\\x20\\xa6\\x99");
    // A byte-order mark is a character like any other.
    expect(pieceText(bytes(0xef, 0xbb, 0xbf))).toBe("\uFEFF");
  });
});

describe("distinctKeys", () => {
  it("gives each alternative its own key: its text, else its bytes: form, else token:<id>", () => {
    const alternatives = [
      { id: 7, piece: bytes(0x61) },
      { id: 300, piece: bytes(0x61) },
      { id: 12, piece: bytes(0xf0) },
      { id: 13, piece: bytes(0xe2) },
      { id: 301, piece: bytes(0x61) },
    ];
    expect(distinctKeys(alternatives)).toEqual(["a", "bytes:\\x61", "bytes:\\xf0", "bytes:\\xe2", "token:301"]);
  });
});

describe("legacy completions logprobs: N keys per entry", () => {
  it("keeps alternatives apart whose texts are the same or are incomplete characters", async () => {
    const { app } = testApp([
      start(),
      token(" Once", {
        logprob: 0,
        top: [
          [" Once", 0],
          [bytes(0xf0), -80],
          [bytes(0xe2), -80],
        ],
      }),
      token(" a", {
        logprob: -0.5,
        top: [
          [" a", -0.5],
          ["a", -1],
          [" a", -2],
        ],
      }),
      finish("length", { completionTokens: 2 }),
    ]);
    for (const stream of [false, true]) {
      const response = await post(app, "/v1/completions", { prompt: "x", logprobs: 3, stream });
      const text = await response.text();
      const entries = stream
        ? text
            .split("\n\n")
            .filter((frame) => frame.startsWith("data: {"))
            .flatMap(
              (frame) =>
                (JSON.parse(frame.slice(6)) as { choices: { logprobs: { top_logprobs: unknown[] } | null }[] })
                  .choices[0]?.logprobs?.top_logprobs ?? [],
            )
        : (JSON.parse(text) as { choices: { logprobs: { top_logprobs: unknown[] } }[] }).choices[0]?.logprobs
            .top_logprobs;
      expect(entries).toEqual([
        { " Once": 0, "bytes:\\xf0": -80, "bytes:\\xe2": -80 },
        { " a": -0.5, a: -1, "bytes:\\x20\\x61": -2 },
      ]);
    }
  });
});
