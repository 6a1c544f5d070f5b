import * as fs from "node:fs";
import { join } from "node:path";
import { MentorError } from "../errors/index.js";

/** The file operations the recorder writes with: node:fs's by default; tests inject failures. */
export interface RecorderFileSystem {
  /** Writes up to `length` bytes of `buffer` from `offset`; returns how many it wrote. */
  writeSync(descriptor: number, buffer: Uint8Array, offset: number, length: number): number;
  ftruncateSync(descriptor: number, length: number): void;
  fsyncSync(descriptor: number): void;
}

export interface FlightRecorderOptions {
  /**
   * Flush each record to the disk (`fsync`) before `write` returns, and the directory once the
   * file is made, so a record survives a power loss too. Default false: a record is handed to the
   * operating system before `write` returns (a killed process loses none; a crashed machine may).
   */
  fsync?: boolean;
  /** Default: node:fs. */
  fileSystem?: RecorderFileSystem;
  /** The file's name in the directory. Default `flight-<time>-<pid>.jsonl` (one file per server start). */
  name?: string;
  /**
   * Open the file for each record and close it after, for a writer that is never closed (a
   * monitor's run has no end to close it at). Default false: the file is open until `close`.
   */
  openPerRecord?: boolean;
}

/** How the recorder's writes went, for `/health` (which needs no key: no file name in it). */
export interface RecorderHealth {
  /** The last write failed: records are being lost. */
  failing: boolean;
  /** Records not written since the server started. */
  failures: number;
  /** The last failure (`code`: the system error's, as `ENOSPC`), kept after the recorder recovers. */
  lastError?: { message: string; code?: string; time: string };
}

/** Where records go: a `FlightRecorder`, or anything else that takes them (a test's array, a queue). */
export interface RecordWriter {
  /** Keeps the record; returns why it could not (the caller goes on without it). */
  write(record: Record<string, unknown>): Error | undefined;
}

/**
 * The flight recorder: one JSON line per record, appended with synchronous writes (the server
 * writes a request's before its answer is sent: a crash loses at most the record being written).
 * One file per server start, or per run (`name`). A record is written whole or not at all: a write that fails part
 * way (disk full, I/O error) is cut back off, so the file always ends with a whole line, and the
 * failure is returned, not thrown (the caller logs it and answers anyway, or refuses).
 */
export class FlightRecorder implements RecordWriter {
  readonly file: string;
  private readonly fsync: boolean;
  private readonly openPerRecord: boolean;
  private closed = false;
  private readonly fileSystem: RecorderFileSystem;
  private descriptor: number | undefined;
  /** Bytes of whole records in the file: where a failed write is cut back to. */
  private length: number;
  /** A failed write could not be cut back: the next write cuts it back first. */
  private torn = false;
  private failures = 0;
  private lastError: RecorderHealth["lastError"];
  private failing = false;

  /** Makes the directory if needed and opens a new file in it; a path that cannot hold one is MNT_ERR_RECORDER_PATH. */
  constructor(directory: string, options: FlightRecorderOptions = {}) {
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    this.file = join(directory, options.name ?? `flight-${stamp}-${process.pid}.jsonl`);
    this.fsync = options.fsync ?? false;
    this.openPerRecord = options.openPerRecord ?? false;
    this.fileSystem = options.fileSystem ?? fs;
    try {
      fs.mkdirSync(directory, { recursive: true });
      this.descriptor = fs.openSync(this.file, "a");
    } catch (error) {
      throw new MentorError(
        "MNT_ERR_RECORDER_PATH",
        `the flight recorder cannot write in ${directory}: ${(error as Error).message}`,
      );
    }
    this.length = fs.fstatSync(this.descriptor).size;
    if (this.fsync) {
      // The new file's name is on disk once its directory is.
      fs.fsyncSync(this.descriptor);
      const folder = fs.openSync(directory, "r");
      try {
        fs.fsyncSync(folder);
      } finally {
        fs.closeSync(folder);
      }
    }
    if (this.openPerRecord) this.closeFile();
  }

  /** Appends the record as one line; returns why it could not (nothing of it is then in the file). */
  write(record: Record<string, unknown>): Error | undefined {
    if (this.closed) return undefined;
    try {
      const line = Buffer.from(`${JSON.stringify(record)}\n`);
      this.descriptor ??= fs.openSync(this.file, "a");
      const descriptor = this.descriptor;
      if (this.torn) this.cutBack(descriptor);
      let written = 0;
      try {
        while (written < line.length) {
          const wrote = this.fileSystem.writeSync(descriptor, line, written, line.length - written);
          if (wrote <= 0) throw new Error(`wrote ${wrote} bytes of a flight record to ${this.file}`);
          written += wrote;
        }
        if (this.fsync) this.fileSystem.fsyncSync(descriptor);
      } catch (error) {
        // Written part way, or whole but not on disk: cut back, as the caller reports it unwritten.
        if (written > 0) this.tryCutBack(descriptor);
        throw error;
      }
      this.length += line.length;
      this.failing = false;
      return undefined;
    } catch (caught) {
      const error = caught instanceof Error ? caught : new Error(String(caught));
      const code = (error as NodeJS.ErrnoException).code;
      this.failures++;
      this.failing = true;
      this.lastError = {
        message: error.message,
        ...(code !== undefined ? { code } : {}),
        time: new Date().toISOString(),
      };
      return error;
    } finally {
      if (this.openPerRecord) this.closeAfterRecord();
    }
  }

  health(): RecorderHealth {
    return {
      failing: this.failing,
      failures: this.failures,
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  close(): void {
    this.closed = true;
    this.closeFile();
  }

  /** A close that fails after the record was written loses nothing: the next record opens the file again. */
  private closeAfterRecord(): void {
    const descriptor = this.descriptor;
    this.descriptor = undefined;
    try {
      if (descriptor !== undefined) fs.closeSync(descriptor);
    } catch {
      // Nothing to report: the record's write is what the caller asked about.
    }
  }

  private closeFile(): void {
    if (this.descriptor === undefined) return;
    fs.closeSync(this.descriptor);
    this.descriptor = undefined;
  }

  /** Truncates the file to its whole records; throws if it cannot (the file then stays torn). */
  private cutBack(descriptor: number): void {
    this.torn = true;
    this.fileSystem.ftruncateSync(descriptor, this.length);
    this.torn = false;
  }

  /** As `cutBack`, leaving a failure to the next write (which cuts back before it appends). */
  private tryCutBack(descriptor: number): void {
    try {
      this.cutBack(descriptor);
    } catch {
      // The write's own error is the one reported.
    }
  }
}
