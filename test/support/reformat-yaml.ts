import { parseAllDocuments, Scalar, visit } from "yaml";

/**
 * The same manifests written differently, as a colleague's editor might: every mapping's keys in
 * reverse order, strings single-quoted, flow collections written as blocks, a comment on every
 * document and mapping, a wider indent. Meaning is unchanged; the text is not.
 */
export function reformatYaml(text: string): string {
  return parseAllDocuments(text)
    .map((doc, index) => {
      if ("errors" in doc && doc.errors.length > 0) throw new Error(`reformatYaml: document ${index} does not parse`);
      visit(doc, {
        Map(_, node) {
          node.items.reverse();
          node.flow = false;
          node.commentBefore = " reformatted";
        },
        Seq(_, node) {
          node.flow = false;
        },
        Scalar(_, node) {
          if (typeof node.value === "string") node.type = Scalar.QUOTE_SINGLE;
        },
      });
      const body = doc.toString({ indent: 4, lineWidth: 0 }).replace(/^---\n/, "");
      return `${index === 0 ? "" : "---\n"}# document ${index + 1}, reformatted\n${body}`;
    })
    .join("");
}

