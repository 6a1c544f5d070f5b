/**
 * The WASM backend's solver process, seen from the client: `worker.ts` started with
 * `child_process.fork`, plain-JSON messages over IPC, one request at a time.
 */
import { type ChildProcess, fork } from "node:child_process";
import { MentorError } from "../errors/index.js";
import type { WireMessage, WireReady, WireReply, WireRequest } from "./protocol.js";

const workerPath = new URL("./worker.js", import.meta.url);

export interface WasmProcessOptions {
  startTimeoutMs: number;
  forcedGcIntervalMs: number | undefined;
  /** Called once when the process exits; `closed` tells whether the client closed it. */
  onExit: () => void;
  /** Whether the client was closed (pending requests then reject with `MNT_ERR_SMT_CLOSED`). */
  isClosed: () => boolean;
}

export class WasmProcess {
  readonly ready: Promise<void>;
  readonly #child: ChildProcess;
  #nextId = 1;
  /** The request waiting for an answer, if any. */
  #pending: { id: number; resolve: (value: unknown) => void; reject: (error: Error) => void } | undefined;

  constructor(options: WasmProcessOptions) {
    const gc = options.forcedGcIntervalMs;
    const child = fork(workerPath, [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      serialization: "json",
      execArgv: gc === undefined ? [] : ["--expose-gc"],
      env: gc === undefined ? process.env : { ...process.env, MENTOR_SMT_FORCED_GC_MS: String(gc) },
    });
    this.#child = child;
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.kill();
        reject(
          new MentorError(
            "MNT_ERR_SMT_TIMEOUT",
            `the solver process did not start within ${options.startTimeoutMs} ms`,
          ),
        );
      }, options.startTimeoutMs);
      child.on("message", (message: WireReady | WireReply) => {
        if ("ready" in message) {
          clearTimeout(timer);
          resolve();
          return;
        }
        const pending = this.#pending;
        if (pending === undefined || pending.id !== message.id) return;
        this.#pending = undefined;
        if (message.ok) pending.resolve(message.result);
        else if (message.error === "timeout") {
          pending.reject(new MentorError("MNT_ERR_SMT_TIMEOUT", `the solver gave up: ${message.message}`));
        } else {
          pending.reject(new MentorError("MNT_ERR_SMT_CRASHED", `the solver failed: ${message.message}`));
        }
      });
      // A send to a process that just died: its exit handler rejects the request.
      child.on("error", () => undefined);
      child.on("exit", (code, signal) => {
        clearTimeout(timer);
        options.onExit();
        const error = options.isClosed()
          ? new MentorError("MNT_ERR_SMT_CLOSED", "the solver client was closed")
          : new MentorError(
              "MNT_ERR_SMT_CRASHED",
              `the solver process exited (code ${code}, signal ${signal})`,
            );
        reject(error);
        this.#pending?.reject(error);
        this.#pending = undefined;
      });
    });
    this.ready.catch(() => undefined);
    // The process must not keep the caller alive: only a pending request's timer does.
    child.unref();
    child.channel?.unref();
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Sends one request; rejects with a `MentorError` (timeout, crash, closed). */
  answer(request: WireRequest): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending = { id, resolve, reject };
      const message: WireMessage = { id, request };
      this.#child.send(message);
    });
  }

  kill(): void {
    this.#pending = undefined;
    this.#child.kill("SIGKILL");
  }

  /** Disconnects (the process exits by itself); SIGKILL if it has not exited after 2 s. */
  async close(): Promise<void> {
    this.#pending?.reject(new MentorError("MNT_ERR_SMT_CLOSED", "the solver client was closed"));
    this.#pending = undefined;
    const child = this.#child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
    await exited;
    clearTimeout(timer);
  }
}
