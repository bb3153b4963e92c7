import "server-only";
import fs from "node:fs/promises";
import path from "node:path";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { guardedFetch } from "@/lib/notifications/transports/url-guard";
import { imageOriginsOf } from "@/lib/organizations/settings";
import { fitForPrint } from "./chart-svg";
import type { Block } from "./layout";

const IMAGE_TYPES = new Set(["image/png", "image/jpeg"]);

/**
 * Images the viewer would load: a path on this site (read from the app's public folder) or an
 * address on one of the organization's image origins, fetched through the webhook URL guard
 * (public addresses only, 1 MB, no redirects). PNG and JPEG only (what a PDF can hold); any
 * other image is named by its alt text instead.
 */
export async function loadImages(orgId: string, widgets: WidgetManifest[]): Promise<Map<string, Block>> {
  const out = new Map<string, Block>();
  if (widgets.length === 0) return out;
  const origins = new Set(await imageOriginsOf(orgId));
  await Promise.all(
    widgets.map(async (w) => {
      const image = w.spec.display.image;
      if (!image) return;
      const loaded = await loadImage(image.url, origins).catch(() => null);
      out.set(
        w.metadata.id,
        !loaded ? { kind: "message", text: `Image not included: ${image.alt}` } : "svg" in loaded ? { kind: "vector", alt: image.alt, svg: loaded.svg } : { kind: "image", alt: image.alt, bytes: loaded.bytes, mime: loaded.mime, fit: image.object_fit },
      );
    }),
  );
  return out;
}

async function loadImage(url: string, origins: ReadonlySet<string>): Promise<{ bytes: Uint8Array; mime: "image/png" | "image/jpeg" } | { svg: string } | null> {
  let bytes: Uint8Array;
  if (url.startsWith("/")) {
    const root = path.join(process.cwd(), "public");
    const file = path.join(root, decodeURIComponent(new URL(url, "http://local").pathname));
    if (!file.startsWith(root + path.sep)) return null;
    bytes = new Uint8Array(await fs.readFile(file));
    // SVG only from this site's own files: a remote one could point svg-to-pdfkit at files on this server.
    const text = Buffer.from(bytes.subarray(0, 512)).toString("utf8").trimStart();
    if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/.test(text)) return { svg: fitForPrint(Buffer.from(bytes).toString("utf8").replace(/^[\s\S]*?(?=<svg[\s>])/, "")) };
  } else {
    const target = new URL(url);
    if (!origins.has(target.origin)) return null;
    const response = await guardedFetch(target, { signal: AbortSignal.timeout(5_000) });
    if (!response.ok) return null;
    bytes = new Uint8Array(await response.arrayBuffer());
  }
  const mime = bytes[0] === 0x89 && bytes[1] === 0x50 ? "image/png" : bytes[0] === 0xff && bytes[1] === 0xd8 ? "image/jpeg" : null;
  return mime && IMAGE_TYPES.has(mime) ? { bytes, mime } : null;
}
