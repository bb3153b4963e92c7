"use client";

import type { CSSProperties } from "react";
import ReactMarkdown from "react-markdown";
import remarkGfm from "remark-gfm";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { isExternal, safeUrl } from "@/lib/dashboards/markdown-links";
import styles from "./widgets.module.css";

/** Markdown without raw HTML; external links open in a new tab without access to this page. */
function Markdown({ content }: { content: string }) {
  return (
    <ReactMarkdown
      remarkPlugins={[remarkGfm]}
      skipHtml
      urlTransform={safeUrl}
      components={{
        a: ({ href, children }) =>
          isExternal(href) ? (
            <a href={href} target="_blank" rel="noopener noreferrer nofollow">
              {children}
            </a>
          ) : (
            <a href={href}>{children}</a>
          ),
      }}
    >
      {content}
    </ReactMarkdown>
  );
}

export function TextWidget({ widget }: { widget: WidgetManifest }) {
  const text = widget.spec.display.text;
  if (!text) return null;
  return (
    <div className={`${styles.text} ${styles[`size_${text.size}`]}`} style={{ textAlign: text.align, "--authored-color": text.color } as CSSProperties}>
      <Markdown content={text.content} />
    </div>
  );
}

export function MarkdownWidget({ widget }: { widget: WidgetManifest }) {
  const content = widget.spec.display.markdown?.content ?? "";
  return (
    <div className={styles.markdown}>
      <Markdown content={content} />
    </div>
  );
}

export function ImageWidget({ widget }: { widget: WidgetManifest }) {
  const image = widget.spec.display.image;
  if (!image) return null;
  return (
    // The URL is any http(s) address from the manifest, so next/image (which needs configured hosts) does not fit.
    // eslint-disable-next-line @next/next/no-img-element
    <img className={styles.image} src={image.url} alt={image.alt} style={{ objectFit: image.object_fit }} loading="lazy" />
  );
}
