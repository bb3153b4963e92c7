import { afterAll, describe, expect, it } from "vitest";
import { startReceiver, startSmtp } from "@/test/support/notification-servers";
import { headerText, isHeaderSafe } from "./header-text";
import { sendExternal, sendReport, type ResolvedChannel } from "./send";

// A real SMTP server on loopback (allow-listed for this file; the configuration is read on first use).
const smtp = await startSmtp();
const receiver = await startReceiver();
process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false });

afterAll(async () => {
  await smtp.close();
  await receiver.close();
});

/** A header's value as a mail reader shows it: folded lines joined, RFC 2047 encoded words decoded. */
function headerValue(raw: string, name: string): string | undefined {
  const head = raw.slice(0, raw.indexOf("\r\n\r\n")).replace(/\r\n[ \t]+/g, " ");
  const line = head.split("\r\n").find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  if (line === undefined) return undefined;
  return line
    .slice(name.length + 1)
    .trim()
    .replace(/=\?utf-8\?([bq])\?([^?]*)\?=\s*/gi, (_, kind: string, text: string) =>
      kind.toLowerCase() === "b"
        ? Buffer.from(text, "base64").toString("utf8")
        : Buffer.from(text.replace(/_/g, " ").replace(/=([0-9a-f]{2})/gi, (__, hex: string) => String.fromCharCode(parseInt(hex, 16))), "latin1").toString("utf8"),
    );
}

describe("header values at send time (issue 41)", () => {
  it("replaces runs of control characters by one space and keeps the rest", () => {
    expect(headerText("Weekly\r\nBcc: all@example.com")).toBe("Weekly Bcc: all@example.com");
    expect(headerText("a\u0000\u000b\u0085b\u2028c\td")).toBe("a b c d");
    expect(headerText("Ventes hebdo — Zürich")).toBe("Ventes hebdo — Zürich");
    expect(isHeaderSafe("Ventes hebdo — Zürich")).toBe(true);
    expect(isHeaderSafe("a\u0085b")).toBe(false);
  });

  it("sends a stored subject, file name and header with line breaks and control characters as one line each", async () => {
    const channel: ResolvedChannel = { kind: "email", enabled: true, settings: { host: "127.0.0.1", port: smtp.port, secure: false, from: "reports@quarry.test" }, secrets: {} };
    const before = smtp.received.length;
    await sendReport(channel, {
      id: "ndl_header_test",
      recipient: "gm@example.com",
      subject: "Weekly\r\nBcc: all@example.com\u000b\u0000: Sales",
      body: "The dashboard.",
      severity: "info",
      ruleKey: "report",
      sentAt: new Date(),
      scheduleId: "rsc_1\r\nX-Injected: yes",
      files: [{ format: "pdf", filename: "sales\r\nX-Other: yes.pdf", contentType: "application/pdf", bytes: Buffer.from("%PDF-1.4"), pages: 1, url: "https://quarry.test/f", expiresAt: new Date() }],
    });
    const mail = smtp.received[before];
    expect(mail.to).toEqual(["gm@example.com"]);
    expect(headerValue(mail.raw, "Subject")).toBe("Weekly Bcc: all@example.com : Sales");
    expect(headerValue(mail.raw, "X-Quarry-Report")).toBe("rsc_1 X-Injected: yes");
    // The message's headers and each part's headers (a body may show the text as it is).
    const headerBlocks = mail.raw.split(/^--.*$/m).map((block) => block.replace(/^\r\n/, "").split("\r\n\r\n")[0]);
    for (const injected of ["Bcc", "X-Injected", "X-Other"]) {
      for (const block of headerBlocks) expect(block, injected).not.toMatch(new RegExp(`^${injected}:`, "im"));
    }
    expect(mail.raw).toMatch(/filename="?sales X-Other: yes\.pdf"?/);
    expect(mail.raw).not.toMatch(/[\u0000\u000b]/);
  });
});

describe("Slack text", () => {
  it("escapes Slack's markup characters in what an organization wrote, so a name cannot ping the channel or hide a link", async () => {
    const channel: ResolvedChannel = { kind: "slack", enabled: true, settings: { mode: "webhook" }, secrets: { webhook_url: `${receiver.url}/slack/T000/B000/XXXX` } };
    const before = receiver.received.length;
    await sendExternal(channel, {
      id: "dlv_slack_escape",
      recipient: "#alerts",
      subject: "<!channel> Revenue & margin",
      body: "Below target at <https://evil.example|Manhattan> & co",
      severity: "warning",
      ruleKey: "sales.escape",
      sentAt: new Date(),
    });
    const [post] = receiver.received.slice(before).filter((r) => r.path.startsWith("/slack/"));
    expect(JSON.parse(post.body).text).toBe("*[WARNING] &lt;!channel&gt; Revenue &amp; margin*\nBelow target at &lt;https://evil.example|Manhattan&gt; &amp; co");
  });
});
