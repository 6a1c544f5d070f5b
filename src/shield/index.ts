export { blockedText, doneRefusedText, formatCall, reminderText } from "./prompt.js";
