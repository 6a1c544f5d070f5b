import { MentorError } from "../errors/index.js";
import { type Formula, formatFormula, visit } from "./formula.js";

/** Past memory fits a 32-bit integer; one bit is the "a position was read" flag. */
export const MAX_PAST_MEMORY_BITS = 30;

/**
 * Evaluates past subformulas (Y, WY, O, H, S) by dynamic programming over the trace: at
 * each position their values follow from the current letter and a few bits remembered
 * from the previous position (one per Y/WY operand and per O/H/S subformula, plus a flag
 * telling whether any position was read). Memory is a bit set, so it can be part of an
 * automaton state.
 */
export class PastEvaluator {
  /** The past subformulas the future part asks about, in the order of `step`'s result bits. */
  readonly roots: readonly Formula[];
  /** Memory before the first position. */
  readonly initialMemory = 0;
  private readonly nodes: Formula[] = [];
  private readonly slot = new Map<number, number>();
  private readonly memoryBit = new Map<number, number>();

  constructor(roots: readonly Formula[]) {
    this.roots = roots;
    for (const root of roots) {
      if (root.hasFuture) {
        throw new MentorError(
          "MNT_ERR_FORMULA_UNSUPPORTED",
          `future operators inside a past operator are not supported: ${formatFormula(root)}`,
        );
      }
      visit(root, (node) => {
        if (this.slot.has(node.id)) return;
        this.slot.set(node.id, this.nodes.length);
        this.nodes.push(node);
      });
    }
    let bit = 1;
    const remember = (node: Formula): void => {
      if (!this.memoryBit.has(node.id)) this.memoryBit.set(node.id, bit++);
    };
    for (const node of this.nodes) {
      if (node.kind === "yesterday" || node.kind === "weakYesterday") remember(node.operand);
      if (node.kind === "once" || node.kind === "historically" || node.kind === "since") remember(node);
    }
    if (bit > MAX_PAST_MEMORY_BITS) {
      throw new MentorError(
        "MNT_ERR_FORMULA_TOO_LARGE",
        `the past subformulas need ${bit} bits of memory; at most ${MAX_PAST_MEMORY_BITS} are supported`,
      );
    }
  }

  /**
   * Reads one position. `atomHolds` answers for the atoms at this position. Returns the
   * values of `roots` as a bit set (bit i for `roots[i]`) and the memory for the next step.
   */
  step(memory: number, atomHolds: (atom: Formula) => boolean): { rootValues: number; memory: number } {
    if (this.roots.length === 0) return { rootValues: 0, memory: 0 };
    const started = (memory & 1) === 1;
    const previous = (node: Formula): boolean => started && ((memory >>> this.bitOf(node)) & 1) === 1;
    const values: boolean[] = new Array(this.nodes.length);
    const value = (node: Formula): boolean => values[this.slot.get(node.id) as number] as boolean;
    for (let index = 0; index < this.nodes.length; index++) {
      const node = this.nodes[index] as Formula;
      let result: boolean;
      switch (node.kind) {
        case "true":
          result = true;
          break;
        case "false":
          result = false;
          break;
        case "atom":
          result = atomHolds(node);
          break;
        case "not":
          result = !value(node.operand);
          break;
        case "and":
          result = node.operands.every(value);
          break;
        case "or":
          result = node.operands.some(value);
          break;
        case "yesterday":
          result = previous(node.operand);
          break;
        case "weakYesterday":
          result = !started || previous(node.operand);
          break;
        case "once":
          result = value(node.operand) || previous(node);
          break;
        case "historically":
          result = value(node.operand) && (!started || previous(node));
          break;
        case "since":
          result = value(node.right) || (value(node.left) && previous(node));
          break;
        default:
          throw new MentorError(
            "MNT_ERR_FORMULA_UNSUPPORTED",
            `unexpected ${node.kind} inside a past operator`,
          );
      }
      values[index] = result;
    }
    let nextMemory = 1;
    for (const [id, bit] of this.memoryBit) {
      if (values[this.slot.get(id) as number]) nextMemory |= 1 << bit;
    }
    let rootValues = 0;
    this.roots.forEach((root, index) => {
      if (value(root)) rootValues |= 1 << index;
    });
    return { rootValues, memory: nextMemory };
  }

  private bitOf(node: Formula): number {
    return this.memoryBit.get(node.id) as number;
  }
}
