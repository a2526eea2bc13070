// POST /models/load and POST /models/unload bodies: the model by name (an id or an alias) and, to
// load, how long it stays loaded once idle (`keep_alive`, edge/fields/keep-alive.ts).
import * as z from "zod";
import { keepAliveField } from "../../fields/keep-alive.js";

const model = z.string({ error: "expected a model name" }).min(1, { error: "expected a model name" });

export const loadModelRequestSchema = z.object({ model, keep_alive: keepAliveField() });
export type LoadModelBody = z.output<typeof loadModelRequestSchema>;

export const unloadModelRequestSchema = z.object({ model });
export type UnloadModelBody = z.output<typeof unloadModelRequestSchema>;
