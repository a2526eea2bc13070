// How much a reply may reason, from each protocol's knob, as the proto's Chat.reasoning_budget
// (tokens inside the template's reasoning segment; when spent, the sidecar closes the segment and
// the model answers). One table for every protocol (docs/contract.md, "Reasoning effort").

/** Effort names across the APIs (OpenAI's reasoning_effort / reasoning.effort, Anthropic's output_config.effort). */
export type Effort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/** Tokens of reasoning per effort; undefined: no limit. */
export const EFFORT_BUDGETS: Readonly<Record<Effort, number | undefined>> = {
  none: 0,
  minimal: 0,
  low: 512,
  medium: 2048,
  high: 8192,
  xhigh: 16384,
  max: undefined,
};

/** The reasoning budget for an effort name; undefined for none given or no limit. */
export function effortBudget(effort: string | null | undefined): number | undefined {
  if (effort == null || !(effort in EFFORT_BUDGETS)) return undefined;
  return EFFORT_BUDGETS[effort as Effort];
}
