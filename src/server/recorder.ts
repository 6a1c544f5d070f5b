import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { MentorError } from "../errors/index.js";

export interface FlightRecorderOptions {
  /**
   * Flush each record to the disk (`fsync`) before `write` returns, and the directory once the
   * file is made, so a record survives a power loss too. Default false: a record is handed to the
   * operating system before `write` returns (a killed process loses none; a crashed machine may).
   */
  fsync?: boolean;
}

/**
 * The flight recorder: one JSON line per request, appended with a synchronous write as soon as
 * the request ends, before its answer is sent (a crash loses at most the record being written).
 * One file per server start.
 */
export class FlightRecorder {
  readonly file: string;
  private readonly fsync: boolean;
  private descriptor: number | undefined;

  /** Makes the directory if needed and opens a new file in it; a path that cannot hold one is MNT_ERR_RECORDER_PATH. */
  constructor(directory: string, options: FlightRecorderOptions = {}) {
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    this.file = join(directory, `flight-${stamp}-${process.pid}.jsonl`);
    this.fsync = options.fsync ?? false;
    try {
      mkdirSync(directory, { recursive: true });
      this.descriptor = openSync(this.file, "a");
    } catch (error) {
      throw new MentorError(
        "MNT_ERR_RECORDER_PATH",
        `the flight recorder cannot write in ${directory}: ${(error as Error).message}`,
      );
    }
    if (this.fsync) {
      // The new file's name is on disk once its directory is.
      fsyncSync(this.descriptor);
      const folder = openSync(directory, "r");
      try {
        fsyncSync(folder);
      } finally {
        closeSync(folder);
      }
    }
  }

  write(record: Record<string, unknown>): void {
    if (this.descriptor === undefined) return;
    writeSync(this.descriptor, `${JSON.stringify(record)}\n`);
    if (this.fsync) fsyncSync(this.descriptor);
  }

  close(): void {
    if (this.descriptor === undefined) return;
    closeSync(this.descriptor);
    this.descriptor = undefined;
  }
}
