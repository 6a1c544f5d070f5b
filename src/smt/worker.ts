/**
 * The solver process (started by `SolverClient` with `child_process.fork`). It loads z3-solver
 * once and answers one request at a time over the IPC channel with plain JSON.
 *
 * z3-solver releases Z3 objects from `FinalizationRegistry` callbacks on the main thread while
 * `check()` runs on a worker thread over the same WASM heap, which corrupts the heap under
 * garbage collection. So before z3-solver is loaded, the global `FinalizationRegistry` is
 * replaced by one whose callbacks are queued while a request is being handled and run after it.
 */
import type { Context } from "z3-solver";
import type { WireMessage, WireReady, WireReply, WireRequest } from "./protocol.js";

let requestInFlight = false;
const heldBack: (() => void)[] = [];

const NativeFinalizationRegistry = globalThis.FinalizationRegistry;

class GuardedFinalizationRegistry<T> extends NativeFinalizationRegistry<T> {
  constructor(cleanup: (heldValue: T) => void) {
    super((heldValue) => {
      if (requestInFlight) heldBack.push(() => cleanup(heldValue));
      else cleanup(heldValue);
    });
  }
}

globalThis.FinalizationRegistry = GuardedFinalizationRegistry as FinalizationRegistryConstructor;

function flushHeldBack(): void {
  while (heldBack.length > 0 && !requestInFlight) (heldBack.shift() as () => void)();
}

const started = performance.now();
const { init } = await import("z3-solver");
const { repair, satisfiable, SolverTimeout } = await import("./solve.js");
const { WasmSession } = await import("./wasm-session.js");
const api = await init();
const z3: Context<"main"> = new api.Context("main");
const initMs = performance.now() - started;
let requests = 0;

async function answer(request: WireRequest): Promise<unknown> {
  switch (request.kind) {
    case "repair":
    case "satisfiable": {
      // Repairs search with push/pop on a plain solver; satisfiability asks `Optimize` once.
      const session = new WasmSession(z3, request.kind === "repair" ? "solver" : "optimize");
      try {
        return request.kind === "repair"
          ? await repair(session, request)
          : await satisfiable(session, request);
      } finally {
        session.release();
      }
    }
    case "stats": {
      const memory = process.memoryUsage();
      return { pid: process.pid, rss: memory.rss, heapUsed: memory.heapUsed, requests, initMs };
    }
    case "block": {
      const until = Date.now() + request.ms;
      while (Date.now() < until) {
        // busy: stands in for a check that does not return
      }
      return null;
    }
  }
}

let queue: Promise<void> = Promise.resolve();

process.on("message", (message: WireMessage) => {
  queue = queue.then(async () => {
    let reply: WireReply;
    requestInFlight = true;
    try {
      const result = (await answer(message.request)) as never;
      reply = { id: message.id, ok: true, result };
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      reply = {
        id: message.id,
        ok: false,
        error: error instanceof SolverTimeout ? "timeout" : "internal",
        message: text,
      };
    } finally {
      requestInFlight = false;
      requests++;
    }
    flushHeldBack();
    process.send?.(reply);
  });
});

process.on("disconnect", () => process.exit(0));

// Stress tests: garbage collections at any moment, in-flight checks included.
const forcedGcMs = Number(process.env.MENTOR_SMT_FORCED_GC_MS);
const collect = (globalThis as { gc?: () => void }).gc;
if (forcedGcMs > 0 && collect !== undefined) setInterval(collect, forcedGcMs).unref();

const ready: WireReady = { ready: true, initMs };
process.send?.(ready);
