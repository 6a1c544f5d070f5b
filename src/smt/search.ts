/** The order in which both repair searches (`solve.ts` with Z3, `direct.ts` without) try arguments. */

/** A repair tries subsets of the repairable arguments: 2^n of them at worst. More are refused. */
export const maxRepairableArguments = 6;

/** The index sets of the given size, in lexicographic order. */
export function* subsets(count: number, size: number, from = 0): Generator<number[]> {
  if (size === 0) {
    yield [];
    return;
  }
  for (let first = from; first <= count - size; first++) {
    for (const rest of subsets(count, size - 1, first + 1)) yield [first, ...rest];
  }
}
