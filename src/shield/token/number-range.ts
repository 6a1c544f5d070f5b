import type { ArgumentSets } from "./call-syntax.js";

// Which numbers a number slot may still write within a constraint's bounds: a prefix is let
// through only where some number it can become (in the slot's syntax and length) lies within them.

/** A number slot's bounds, each end open or closed (infinite where the sets give none). */
export interface NumberRange {
  low: number;
  lowOpen: boolean;
  high: number;
  highOpen: boolean;
}

/** Search steps per prefix before it is let through undecided (the mask stays on the safe side). */
const maxSearchSteps = 4000;

/** The bounds of `sets`, the tighter where both the inclusive and the exclusive one are given; undefined for none. */
export function numberRange(sets: ArgumentSets): NumberRange | undefined {
  const { minimum, exclusiveMinimum, maximum, exclusiveMaximum } = sets;
  if ([minimum, exclusiveMinimum, maximum, exclusiveMaximum].every((bound) => bound === undefined))
    return undefined;
  const lowOpen = exclusiveMinimum !== undefined && (minimum === undefined || exclusiveMinimum >= minimum);
  const highOpen = exclusiveMaximum !== undefined && (maximum === undefined || exclusiveMaximum <= maximum);
  return {
    low: (lowOpen ? exclusiveMinimum : minimum) ?? Number.NEGATIVE_INFINITY,
    lowOpen,
    high: (highOpen ? exclusiveMaximum : maximum) ?? Number.POSITIVE_INFINITY,
    highOpen,
  };
}

export function inRange(value: number, range: NumberRange): boolean {
  return (
    (value > range.low || (!range.lowOpen && value === range.low)) &&
    (value < range.high || (!range.highOpen && value === range.high))
  );
}

/**
 * Whether `prefix` (a prefix of a JSON number: `-`, digits, one `.` where not `integer`, no
 * exponent) can still end as a number of at most `maxLength` characters within `range`.
 */
export function canEndInRange(
  prefix: string,
  range: NumberRange,
  integer: boolean,
  maxLength: number,
): boolean {
  const search = new Search(range, integer);
  const found = (sign: "" | "-") =>
    search.magnitude(sign, prefix.slice(sign.length), maxLength - sign.length) !== false;
  if (prefix === "") return found("") || found("-");
  return found(prefix.startsWith("-") ? "-" : "");
}

/** A depth-first search over the digits still to write, cut where a prefix's values all lie in or out of range. */
class Search {
  private steps = 0;

  constructor(
    private readonly range: NumberRange,
    private readonly integer: boolean,
  ) {}

  /** Whether the number `sign` + `written` + more can end within range (`budget`: characters after the sign); undefined: too long a search. */
  magnitude(sign: "" | "-", written: string, budget: number): boolean | undefined {
    if (++this.steps > maxSearchSteps) return undefined;
    if (written.length > budget) return false;
    const [low, high] = this.hull(sign, written, budget);
    const { range } = this;
    if (high < range.low || low > range.high) return false;
    const dot = written.indexOf(".");
    const complete = written !== "" && !written.endsWith(".");
    const strictlyInside =
      (low > range.low || (!range.lowOpen && low === range.low)) &&
      (high < range.high || (!range.highOpen && high === range.high));
    if (strictlyInside && (complete || written.length < budget)) return true;
    if (complete && inRange(Number(sign + written), range)) return true;
    const children: string[] = [];
    if (written.length < budget) {
      if (written !== "0") for (let digit = 0; digit <= 9; digit++) children.push(written + digit);
      if (!this.integer && dot < 0 && written !== "" && written.length + 1 < budget)
        children.push(`${written}.`);
    }
    let undecided = false;
    for (const child of children) {
      const found = this.magnitude(sign, child, budget);
      if (found) return true;
      if (found === undefined) undecided = true;
    }
    return undecided ? undefined : false;
  }

  /**
   * An interval holding every value `sign` + `written` + more can end as (slightly widened, so
   * that rounding never leaves one out).
   */
  private hull(sign: "" | "-", written: string, budget: number): [number, number] {
    let low: number;
    let high: number;
    const dot = written.indexOf(".");
    if (written === "") [low, high] = [0, 10 ** budget];
    else if (dot >= 0) {
      low = Number(written.endsWith(".") ? written.slice(0, -1) : written);
      high = low + 10 ** -(written.length - dot - 1);
    } else if (written === "0") [low, high] = [0, this.integer ? 0 : 1];
    else {
      low = Number(written);
      high = (low + 1) * 10 ** (budget - written.length);
    }
    const widen = (value: number) => Math.abs(value) * 1e-15;
    [low, high] = [low - widen(low), high + widen(high)];
    return sign === "-" ? [-high, -low] : [low, high];
  }
}
