import { fileURLToPath } from "node:url";

/**
 * The tests' benchmark data directory: made-up users, orders, flights and tasks in the formats
 * of tau2-bench and tau-bench v1 (test/fixtures/bench-data/README.md), so the tests never need
 * the third-party data that `--data` / `MENTOR_BENCH_DATA` point the benchmarks at.
 */
export const fixtureBenchData = fileURLToPath(new URL("../../../test/fixtures/bench-data", import.meta.url));
