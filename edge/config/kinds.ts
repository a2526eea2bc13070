// The kinds of value an edge setting may hold (edge/config/settings.ts): what each accepts, in
// words for messages and docs/configuration.md, and how a raw environment string becomes it.
import * as z from "zod";

/** What a value is wrong about, beyond "not <accepts>" (e.g. which entry of a list). */
export class Refusal extends Error {}

export interface Kind<T> {
  /** The type column of docs/configuration.md, e.g. `integer ≥ 0`. */
  readonly type: string;
  /** What a value must be, completing "is not …": e.g. `a non-negative integer`. */
  readonly accepts: string;
  /** A raw value (never empty) → the typed one; throws a Refusal (or anything) when it is not one. */
  parse(raw: string): T;
}

/** A whole number from `min` to `max`, in decimal digits. */
export function integer(min = 0, max?: number): Kind<number> {
  const accepts =
    min === 0 && max === undefined
      ? "a non-negative integer"
      : `an integer from ${min}${max === undefined ? " up" : ` to ${max}`}`;
  return {
    type: max === undefined ? `integer ≥ ${min}` : `integer ${min}–${max}`,
    accepts,
    parse(raw) {
      const value = Number(raw.trim());
      if (!/^\d+$/.test(raw.trim()) || value < min || (max !== undefined && value > max)) throw new Refusal();
      return value;
    },
  };
}

export const boolean: Kind<boolean> = {
  type: "`true` / `false`",
  accepts: "true or false",
  parse(raw) {
    const value = raw.trim().toLowerCase();
    if (value !== "true" && value !== "false") throw new Refusal();
    return value === "true";
  },
};

/** Any text, taken as is (a path, a host name, a secret). */
export function text(type = "text", accepts = "text"): Kind<string> {
  return { type, accepts, parse: (raw) => raw };
}

/** One of a few words, as written. */
export function oneOf<const T extends string>(...values: readonly T[]): Kind<T> {
  const listed = values.map((value) => `\`${value}\``).join(" / ");
  return {
    type: listed,
    accepts: `one of ${values.join(", ")}`,
    parse(raw) {
      const value = values.find((candidate) => candidate === raw.trim());
      if (value === undefined) throw new Refusal();
      return value;
    },
  };
}

function isHttpUrl(value: string): boolean {
  const protocol = URL.canParse(value) ? new URL(value).protocol : "";
  return protocol === "http:" || protocol === "https:";
}

export const httpUrl: Kind<string> = {
  type: "http(s) URL",
  accepts: "an http(s) URL",
  parse(raw) {
    if (!isHttpUrl(raw.trim())) throw new Refusal();
    return raw.trim();
  },
};

/** http(s) URLs, comma-separated, blanks dropped, none twice. */
export const httpUrls: Kind<string[]> = {
  type: "http(s) URLs, comma-separated",
  accepts: "http(s) URLs, comma-separated, each once",
  parse(raw) {
    const list = raw
      .split(",")
      .map((u) => u.trim())
      .filter((u) => u !== "");
    list.forEach((item, i) => {
      if (!isHttpUrl(item)) throw new Refusal(`entry ${i + 1} is not an http(s) URL`);
    });
    if (new Set(list).size !== list.length) throw new Refusal("names the same sidecar twice");
    return list;
  },
};

const headerObject = z.record(z.string(), z.string());

/** A JSON object of header names to string values. */
export const jsonHeaders: Kind<Record<string, string>> = {
  type: "JSON object",
  accepts: "a JSON object of header names to string values",
  parse(raw) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new Refusal("the value is not JSON");
    }
    const result = headerObject.safeParse(parsed);
    if (!result.success) throw new Refusal();
    return result.data;
  },
};

/** Client keys, comma-separated, each a key or `sha256:` and 64 hex digits; kept as written. */
export const keyList: Kind<string> = {
  type: "list (secret)",
  accepts: "keys, comma-separated, each a key or sha256:<64 hex digits>",
  parse(raw) {
    raw.split(",").forEach((entry, i) => {
      const key = entry.trim();
      if (key.toLowerCase().startsWith("sha256:") && !/^[0-9a-f]{64}$/i.test(key.slice(7)))
        throw new Refusal(`entry ${i + 1}: sha256: must be followed by 64 hex digits`);
    });
    return raw;
  },
};
