import type { SourceLocation } from "../errors/index.js";
import type { Expression, FieldType, PathSegment, Value } from "../expression/index.js";
import type { Automaton, Formula } from "../logic/index.js";
import type { PolicySettings } from "./settings.js";
import type { TextPattern } from "./text-pattern.js";

/** What happens when a rule would be broken: only recorded, a warning added, or the call blocked. */
export type Mode = "record" | "warn" | "block";

/**
 * What a broken rule does to the call (docs/policy.md, "Severities"): `stop` refuses it and stops
 * the run until resumed; `block` refuses it every time; `ask` holds it for a person; `escalate`
 * refuses it, and after enough attempts escalates `to` stop or ask; `override` refuses it once, and the
 * identical call proposed next goes through with a warning; `warn` and `record` allow it. Every
 * severity but `warn` and `record` refuses, so the game (and the token shield) treats it as `block`.
 */
export type Severity =
  | { kind: "stop" | "block" | "ask" | "override" | "warn" | "record" }
  | {
      kind: "escalate";
      after: number;
      counting: "consecutive" | "cumulative" | "hybrid";
      /** For `hybrid`: attempts in the whole run that escalate. */
      total: number;
      to: "stop" | "ask";
    };

export interface Parameter {
  name: string;
  type: FieldType;
  description: string;
  /** The parameter as JSON Schema (what OpenAI `tools` carry). */
  jsonSchema: Record<string, unknown>;
}

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Parameter[];
  required: string[];
  output: "json" | "text";
  /** For text outputs: label → its meaning. */
  labels: Record<string, string>;
  repairable: string[];
  /** The same call may return something else later in the run: its observed outcomes are not facts. */
  volatile?: boolean;
  /** Its calls are in every binding's history, made before or after the binding was first named. */
  shared?: boolean;
  /** For text outputs: deterministic rules and whether the LLM labeler may be used. */
  labeler: OutputLabeler;
  /** For text outputs: values read from the output besides its label (`last('tool').<field>`). */
  fields?: Record<string, OutputField>;
}

/** A value read from a text output: the first group of the pattern, as a number or as text. */
export interface OutputField {
  kind: "number" | "text";
  pattern: TextPattern;
}

/** What a deterministic labeling rule tests on a tool's output text. */
export type LabelTest =
  | { kind: "json"; path: PathSegment[]; equals: string | number | boolean | null }
  | { kind: "regex"; pattern: TextPattern }
  | { kind: "keywords"; pattern: TextPattern }
  | { kind: "number"; pattern: TextPattern; scale: number; bounds: NumberBounds };

export interface NumberBounds {
  lt?: number;
  lte?: number;
  gt?: number;
  gte?: number;
}

export interface LabelRule {
  label: string;
  test: LabelTest;
}

export interface OutputLabeler {
  /** In order; the first that matches gives the label. */
  rules: LabelRule[];
  /** May the LLM labeler label an output no rule matches? */
  llm: boolean;
}

/** How one task field is found in the request text outside the call patterns. */
export type FieldRule =
  | { kind: "pattern"; pattern: TextPattern; default?: Value }
  /** A boolean: true if `any` matches and `unless` does not. */
  | { kind: "flag"; any: TextPattern; unless: TextPattern | undefined }
  /** The first value whose keywords occur. */
  | { kind: "choice"; choices: { value: Value; pattern: TextPattern }[]; default?: Value };

export interface TaskGrounding {
  /** Regexes whose named groups are fields; each match is one call. */
  patterns: TextPattern[];
  fields: Record<string, FieldRule>;
  /** May the LLM labeler ground a request the patterns do not match? */
  llm: boolean;
  /** In a later message: the call it grounds replaces the standing one (docs/policy.md, "Amended requests"). */
  amends: TextPattern | undefined;
  /** In a later message: the standing call is withdrawn. */
  withdraws: TextPattern | undefined;
}

export interface TaskCallSpec {
  name: string;
  description: string;
  parameters: Parameter[];
  /** Undefined: the policy declares no grounding for this call (only the client or the LLM may). */
  grounding: TaskGrounding | undefined;
  /** The tools that do what the request asks: its duties' way asked for (empty: read from its fields). */
  asksFor: string[];
}

export interface EntitySpec {
  name: string;
  variables: string[];
  /** Each call of `taskCall` in the task introduces one binding: variable ← field. */
  sources: { taskCall: string; bind: Record<string, string> }[];
  /** Each JSON output of `tool` that has every path introduces one binding: variable ← the value there. */
  outputs: { tool: string; bind: Record<string, PathSegment[]> }[];
}

export interface PropositionSpec {
  name: string;
  /** The entities it is parameterized by, in order (`checked(route)` → ["route"]). */
  entities: string[];
  /** As written in the policy, e.g. `checked(route)`; also the atom key rules use. */
  key: string;
  tool: string;
  when: Expression | undefined;
  whenText: string | undefined;
  outcome: Expression | undefined;
  outcomeText: string | undefined;
  /**
   * Variable → argument path, read from `a.<path> == variable` conjuncts of `when`: how a call
   * of the tool names a binding (and introduces a new one).
   */
  bindingPattern: Record<string, PathSegment[]>;
  /** Where it is declared (its key), for findings about it. */
  location?: SourceLocation;
}

export interface RuleSpec {
  id: string;
  formula: Formula;
  /** The entities the rule is sliced by (one automaton instance per binding). */
  entities: string[];
  mode: Mode;
  severity: Severity;
  appliesTo: "all" | "requested" | "unrequested";
  /** The manual's sentence, quoted in feedback. */
  sentence: string;
  /** Its share of the weighted compliance score (`weight`, default 1). */
  weight: number;
  /** Where the rule is written. */
  location: SourceLocation;
  /** The rule's automaton, over the letters the policy's tools can produce. */
  automaton: Automaton;
  /** The propositions of the rule's atoms (atom key = `proposition.key`). */
  propositions: PropositionSpec[];
}

export interface ConstraintSpec {
  id: string;
  on: PropositionSpec;
  require: Expression;
  requireText: string;
  /** Where `require` is written in the policy file. */
  location: SourceLocation;
  mode: Mode;
  severity: Severity;
  sentence: string;
  /** Its share of the weighted compliance score (`weight`, default 1). */
  weight: number;
}

export interface Policy {
  name: string;
  description: string;
  file: string;
  /** The text it was compiled from (a variant for another system prompt is compiled from it). */
  source: string;
  /** Settings read from the system prompt and the values this policy was compiled with. */
  settings: PolicySettings;
  manual: Record<string, string>;
  tools: Map<string, ToolSpec>;
  taskCalls: Map<string, TaskCallSpec>;
  entities: Map<string, EntitySpec>;
  propositions: Map<string, PropositionSpec>;
  rules: RuleSpec[];
  constraints: ConstraintSpec[];
  maxDoneRefusals: number;
  /** `done.stuck_after`: calls after which open duties no longer force another call (0: never). */
  stuckAfter: number;
  /** `done.tool`: a call to this tool ends the run; it is judged as `done`, never as a tool call. */
  doneTool?: string;
}
