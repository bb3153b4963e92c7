import { fromMarkdown } from "mdast-util-from-markdown";
import type { Nodes, RootContent } from "mdast";
import { safeUrl } from "@/lib/dashboards/markdown-links";
import type { LatinFace, Paragraph, Span } from "./layout";

/**
 * Markdown of text and markdown widgets as report paragraphs: headings, paragraphs, list items
 * (nested, bulleted or numbered), emphasis and strong, links. Links pass the viewer's rules
 * (safeUrl); only absolute http(s) and mailto targets become PDF links, since a report has no
 * page to resolve an in-app path against. Raw HTML is dropped, as in the viewer.
 */
export function markdownParagraphs(content: string): Paragraph[] {
  const paragraphs: Paragraph[] = [];
  const inline = (node: Nodes, face: LatinFace, link: string | undefined, out: Span[]) => {
    switch (node.type) {
      case "text":
      case "inlineCode":
        out.push({ text: node.value.replace(/\s+/g, " "), face, ...(link ? { link } : {}) });
        return;
      case "break":
        out.push({ text: " ", face });
        return;
      case "emphasis":
        for (const child of node.children) inline(child, face === "bold" ? "bold" : "italic", link, out);
        return;
      case "strong":
        for (const child of node.children) inline(child, "bold", link, out);
        return;
      case "link": {
        const target = safeUrl(node.url);
        const usable = /^(https?:|mailto:)/i.test(target) ? target : undefined;
        for (const child of node.children) inline(child, face, usable ?? link, out);
        return;
      }
      case "image":
        if (node.alt) out.push({ text: node.alt, face: "italic" });
        return;
      default:
        if ("children" in node) for (const child of node.children) inline(child as Nodes, face, link, out);
    }
  };
  const block = (node: RootContent, depth: number, bullet?: string) => {
    switch (node.type) {
      case "heading": {
        const spans: Span[] = [];
        for (const child of node.children) inline(child, "bold", undefined, spans);
        paragraphs.push({ kind: "heading", level: node.depth, spans });
        return;
      }
      case "paragraph": {
        const spans: Span[] = [];
        for (const child of node.children) inline(child, "regular", undefined, spans);
        paragraphs.push(bullet ? { kind: "item", level: depth, bullet, spans } : { kind: "paragraph", level: 0, spans });
        return;
      }
      case "list":
        node.children.forEach((item, i) => {
          const mark = node.ordered ? `${(node.start ?? 1) + i}.` : "•";
          item.children.forEach((child, j) => block(child, depth + 1, j === 0 ? mark : " "));
        });
        return;
      case "blockquote":
        for (const child of node.children) block(child, depth, bullet);
        return;
      case "code":
        paragraphs.push({ kind: "paragraph", level: 0, spans: [{ text: node.value, face: "regular" }] });
        return;
      default:
        return;
    }
  };
  for (const node of fromMarkdown(content).children) block(node, 0);
  return paragraphs;
}
