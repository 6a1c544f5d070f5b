import type { StrategyTemplate } from "../game/index.js";
import type { Mode } from "../policy/index.js";
import { type Binding, describeBinding, type Instance } from "../run/index.js";
import type { RuleFinding } from "./types.js";

/**
 * The text of a set of bindings (`route(x="Toronto", y="Chicago")`) as findings and duties carry
 * it, kept per bindings array: an instance's array is asked about on every decision.
 */
export class BindingTexts {
  // Keyed by the bindings array: instances keep theirs for their lifetime, so its text goes with them.
  private readonly texts = new WeakMap<readonly Binding[], string>();

  /** `{ binding }` for a finding or a duty, or `{}` for no bindings. */
  field(bindings: readonly Binding[]): { binding?: string } {
    const binding = this.text(bindings);
    return binding === undefined ? {} : { binding };
  }

  finding(
    rule: string,
    sentence: string,
    mode: Mode,
    kind: RuleFinding["kind"],
    bindings: readonly Binding[],
  ): RuleFinding {
    return { rule, sentence, mode, kind, ...this.field(bindings) };
  }

  private text(bindings: readonly Binding[]): string | undefined {
    if (bindings.length === 0) return undefined;
    let text = this.texts.get(bindings);
    if (text === undefined) {
      text = bindings.map(describeBinding).join(", ");
      this.texts.set(bindings, text);
    }
    return text;
  }
}

/** A decision's findings, one per rule and binding. */
export class Findings {
  private readonly byKey = new Map<string, RuleFinding>();

  constructor(private readonly texts: BindingTexts) {}

  add(found: RuleFinding): void {
    this.byKey.set(`${found.rule}|${found.binding ?? ""}`, found);
  }

  addAll(found: RuleFinding[]): void {
    for (const entry of found) this.add(entry);
  }

  addInstance(instance: Instance, mode: Mode): void {
    this.add(
      this.texts.finding(instance.rule.id, instance.rule.sentence, mode, "temporal", instance.bindings),
    );
  }

  /**
   * The rules to blame in states with no compliant finish; `withoutFinish`: the run had none before
   * the call either, so only the rules the call broke for good.
   */
  addLost(template: StrategyTemplate, states: readonly Int32Array[], withoutFinish: boolean): void {
    for (const state of states) {
      if (template.distance(state) !== Number.POSITIVE_INFINITY) continue;
      const doomed = template.doomedInstances(state);
      // A trap without a single doomed rule: every rule with an open duty shares the blame (not
      // in a run that had no compliant finish before the call: there, only what the call broke).
      const blamed = doomed.length > 0 || withoutFinish ? doomed : template.openInstances(state);
      for (const index of blamed) this.addInstance(template.run.instances[index] as Instance, "block");
    }
  }

  list(): RuleFinding[] {
    return [...this.byKey.values()];
  }
}
