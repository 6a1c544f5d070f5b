/**
 * Start a process with `node --import <this file>` and `MENTOR_IMPORT_LOG=<file>`: every ES
 * module the process loads is appended to that file, one URL a line. Tests use it to show what a
 * code path does not load (proxy mode and node-llama-cpp).
 */
import { register } from "node:module";

const file = process.env.MENTOR_IMPORT_LOG;
if (file === undefined) throw new Error("import-recorder: set MENTOR_IMPORT_LOG to the log file");
register("./import-recorder-hooks.js", import.meta.url, { data: { file } });
