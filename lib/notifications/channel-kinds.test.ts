import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CHANNEL_LABELS, ChannelKind, channelLabel } from "./channel-kinds";

// Issue 32: the interface said "In-app" in one place and "in_app" in others. One label per kind, everywhere.
describe("channel labels", () => {
  it("name every kind once; the API value stays as it is", () => {
    expect(Object.keys(CHANNEL_LABELS).sort()).toEqual([...ChannelKind.options].sort());
    expect(channelLabel("in_app")).toBe("In-app");
    expect(channelLabel("email")).toBe("Email");
    expect(channelLabel("sms")).toBe("sms");
  });

  it("are what the notification components show: no kind value is rendered as text", () => {
    const dir = path.resolve("components/notifications");
    const raw: string[] = [];
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".tsx"))) {
      const source = fs.readFileSync(path.join(dir, file), "utf8");
      // A kind rendered as JSX text: {c.kind}, {d.channel}, {c}, {kind} between tags, or "In-app" spelt out.
      for (const match of source.matchAll(/>\s*\{(?:\w+\.)?(?:kind|channel|c)\}\s*</g)) raw.push(`${file}: ${match[0]}`);
      for (const match of source.matchAll(/"In-app"/g)) raw.push(`${file}: ${match[0]}`);
    }
    expect(raw).toEqual([]);
  });
});
