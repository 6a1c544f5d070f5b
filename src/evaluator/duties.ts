import type { CandidateCall, StrategyTemplate } from "../game/index.js";
import type { Binding, Run } from "../monitor/index.js";
import type { BindingTexts } from "./findings.js";
import type { Duty, ProposedCall } from "./types.js";

/** Fills a call's required arguments on a run (`fillArguments`), naming those nothing gives. */
export type FillArguments = (
  run: Run,
  call: ProposedCall,
  bindings: readonly Binding[],
) => { call: ProposedCall; missing: string[] };

/**
 * Open duties: enforced rule instances that do not accept, each with a call that helps if one is
 * known. Kept per template and beliefs array (every blocked call on a run asks for the run's
 * own); callers get their own copies.
 */
export class Duties {
  // Keyed by template, then beliefs array (runs and templates are never changed once built): an entry lives as long as both.
  private readonly byTemplate = new WeakMap<StrategyTemplate, WeakMap<readonly Int32Array[], Duty[]>>();

  constructor(
    private readonly texts: BindingTexts,
    private readonly fill: FillArguments,
  ) {}

  /** Open duties at `beliefs`, states of `template`'s instances. */
  at(template: StrategyTemplate, beliefs: readonly Int32Array[]): Duty[] {
    const byBeliefs = this.byTemplate.get(template) ?? new WeakMap<readonly Int32Array[], Duty[]>();
    this.byTemplate.set(template, byBeliefs);
    let duties = byBeliefs.get(beliefs);
    if (!duties) {
      duties = this.open(template, beliefs);
      byBeliefs.set(beliefs, duties);
    }
    return duties.map((duty) => ({ ...duty, ...(duty.missing ? { missing: [...duty.missing] } : {}) }));
  }

  private open(template: StrategyTemplate, beliefs: readonly Int32Array[]): Duty[] {
    const duties: Duty[] = [];
    const helpers = template.helpingCandidates();
    template.run.instances.forEach((instance, index) => {
      if (instance.rule.mode === "record") return;
      const open = beliefs.find((belief) => !instance.rule.automaton.isAccepting(belief[index] as number));
      if (!open) return;
      const duty: Duty = {
        rule: instance.rule.id,
        sentence: instance.rule.sentence,
        colour: instance.rule.automaton.colour(open[index] as number),
      };
      Object.assign(duty, this.texts.field(instance.bindings));
      // A progressing call on the duty's own bindings (it may touch the rule only later, like a
      // distance check before the booking that fulfils "book the trip").
      const fulfil = template.firstProgressing(open, helpers[index] as CandidateCall[]);
      // Filled like advice: the call the prompt shield names and the token shield redirects to is one the agent can make.
      if (fulfil) {
        const filled = this.fill(template.run, { name: fulfil.tool, arguments: fulfil.arguments }, fulfil.bindings);
        duty.fulfil = filled.call;
        if (filled.missing.length > 0) duty.missing = filled.missing;
      }
      duties.push(duty);
    });
    return duties;
  }
}
