/** One value per class of comparisons, for the direct search (`direct.ts`). */
import { NotDirect } from "./direct-terms.js";

/** At most this many strings from one substring, prefix or suffix set (`x in 'text'`). */
const maxStringSet = 300;

/**
 * One number per class: each point and its neighbouring doubles (rounding may move a boundary
 * by an ulp), a number between each two points, and one beyond each end. Integers: the
 * integers around each point.
 */
export function numericRepresentatives(points: number[], integer: boolean): number[] {
  const sorted = [...new Set(points)].sort((a, b) => a - b);
  if (sorted.length === 0) return [0];
  const values: number[] = [];
  if (integer) {
    for (const point of sorted)
      values.push(Math.floor(point) - 1, Math.floor(point), Math.ceil(point), Math.ceil(point) + 1);
    return values;
  }
  sorted.forEach((point, index) => {
    values.push(point, nextDouble(point, -1), nextDouble(point, 1));
    const following = sorted[index + 1];
    if (following !== undefined) values.push(point / 2 + following / 2);
  });
  values.push((sorted[0] as number) - 1, (sorted[sorted.length - 1] as number) + 1);
  return values;
}

/** The neighbouring double of a finite number, downwards (-1) or upwards (1). */
export function nextDouble(value: number, direction: -1 | 1): number {
  if (value === 0) return direction * Number.MIN_VALUE;
  const buffer = new DataView(new ArrayBuffer(8));
  buffer.setFloat64(0, value);
  const bits = buffer.getBigInt64(0);
  buffer.setBigInt64(0, value > 0 === direction > 0 ? bits + 1n : bits - 1n);
  return buffer.getFloat64(0);
}

/**
 * One string per class of comparisons (equality and code-point order) with the points: each
 * point, the empty string (the least), and each point followed by U+0000, its immediate
 * successor, which lies between it and the next point whenever any string does.
 */
export function stringRepresentatives(points: string[]): string[] {
  return [...points, "", ...points.map((point) => `${point}\u0000`)];
}

/** The distinct substrings of a text (by code point), the empty one included. */
export function substrings(text: string): string[] {
  const points = [...text];
  const found = new Set<string>([""]);
  for (let from = 0; from < points.length; from++) {
    for (let to = from + 1; to <= points.length; to++) {
      found.add(points.slice(from, to).join(""));
      if (found.size > maxStringSet) throw new NotDirect("a substring set too large");
    }
  }
  return [...found];
}

export function prefixes(text: string): string[] {
  const points = [...text];
  return points.map((_, index) => points.slice(0, index).join("")).concat(text);
}

export function suffixes(text: string): string[] {
  const points = [...text];
  return points.map((_, index) => points.slice(index).join("")).concat("");
}
