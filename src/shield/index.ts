export { blockedText, doneRefusedText, formatCall, reminderText, stoppedText, stuckText } from "./prompt.js";
