/**
 * A picture a notification's text links to (a widget alert's chart, lib/alerts/delivery.ts), written as one line of
 * the text so every channel carries it, and read back by the places that show a delivery's text (the demo outbox)
 * to draw it. Plain text both ways: no server code, the browser reads it too.
 */
const LINE = /^Picture of (.+) \(link valid until ([^)]+)\): (https?:\/\/\S+)$/gm;

export function pictureLine(alt: string, url: string, expiresAt: Date): string {
  return `Picture of ${alt.replace(/[\r\n]+/g, " ")} (link valid until ${expiresAt.toISOString()}): ${url}`;
}

/** The pictures a delivery's text links to, in order. */
export function picturesIn(text: string): { alt: string; url: string }[] {
  return [...text.matchAll(LINE)].map((m) => ({ alt: m[1], url: m[3] }));
}
