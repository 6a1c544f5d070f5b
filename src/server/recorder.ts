import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * The flight recorder: one JSON line per request, appended with a synchronous write as soon as
 * the request ends (a crash loses at most the record being written). One file per server start.
 */
export class FlightRecorder {
  readonly file: string;
  private descriptor: number | undefined;

  constructor(directory: string) {
    mkdirSync(directory, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    this.file = join(directory, `flight-${stamp}-${process.pid}.jsonl`);
    this.descriptor = openSync(this.file, "a");
  }

  write(record: Record<string, unknown>): void {
    if (this.descriptor === undefined) return;
    writeSync(this.descriptor, `${JSON.stringify(record)}\n`);
  }

  close(): void {
    if (this.descriptor === undefined) return;
    closeSync(this.descriptor);
    this.descriptor = undefined;
  }
}
