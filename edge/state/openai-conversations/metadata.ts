// A conversation's `metadata`: at most 16 string values, keys of at most 64 characters, values of
// at most 512, as OpenAI's API bounds it. `null` is no metadata: `{}`.
import * as z from "zod";
import type { ConversationMetadata } from "./store.js";

const metadataObject = z
  .record(
    z.string().max(64, { error: "keys are at most 64 characters long" }),
    z.string().max(512, { error: "values are at most 512 characters long" }),
    {
      error: "expected an object of string values",
    },
  )
  .refine((metadata) => Object.keys(metadata).length <= 16, { error: "expected an object with at most 16 keys" });

/** Creating: absent or null is `{}`. */
export const optionalMetadata = metadataObject.nullish().transform((metadata): ConversationMetadata => metadata ?? {});

/** Updating: required; null is `{}`. */
export const requiredMetadata = z.preprocess((value) => (value === null ? {} : value), metadataObject);
