/**
 * Text that goes into a message header (an e-mail's Subject, an attachment's file name, an
 * `X-Quarry-…` header). A line break there ends the header and starts another one the sender
 * never meant (`Bcc:`, a second body), and other control characters are read differently by each
 * mail system. So they are refused where a user saves the text (the zod schemas say
 * HEADER_SAFE_MESSAGE) and replaced by spaces at send time, for rows stored before the rule.
 * Framework-free: the contracts use it too.
 */

/** C0 controls (CR, LF, tab, NUL…), DEL, C1 controls (NEL…), and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const CONTROL_RUNS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

export const HEADER_SAFE_MESSAGE = "must not contain line breaks, tabs or other control characters";

/** Whether `text` can go into a header as it is. */
export function isHeaderSafe(text: string): boolean {
  return !CONTROL.test(text);
}

/** `text` with every run of control characters replaced by one space: what a header may carry. */
export function headerText(text: string): string {
  return text.replace(CONTROL_RUNS, " ").trim();
}
