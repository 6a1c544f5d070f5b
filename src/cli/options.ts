import { MentorError } from "../errors/index.js";

/** A whole-number flag of at least `min`; the error names the flag. */
export function integer(text: string, option: string, min: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min)
    throw new MentorError(
      "MNT_ERR_BAD_INPUT",
      `${option} must be an integer of at least ${min}, not ${text}`,
    );
  return value;
}

/** A number flag of at least `min`; the error names the flag. */
export function decimal(text: string, option: string, min: number): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value < min)
    throw new MentorError("MNT_ERR_BAD_INPUT", `${option} must be a number of at least ${min}, not ${text}`);
  return value;
}
