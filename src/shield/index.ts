export { blockedText, doneRefusedText, formatCall, reminderText, stoppedText } from "./prompt.js";
