import { CST, Lexer } from "yaml";

/**
 * Nesting depth checked before the YAML is composed. The yaml package composes one nesting
 * level per recursive call: a document nested thousands of levels deep overflows the stack
 * inside it, and deeper text can abort the process (a RegExp allocation failure, not a
 * catchable error). Manifests are a handful of levels deep, so text nested past
 * MAX_YAML_DEPTH is refused with its position instead.
 *
 * The depth is counted on the tokens of the yaml package's own lexer, which is iterative and
 * is the first stage of the parse that follows: a quote, `#`, `|` or `---` counts exactly as
 * the parser will read it, so no spelling can hide a bracket from the count.
 */
export const MAX_YAML_DEPTH = 64;

export interface DepthProblem {
  line: number;
  column: number;
  message: string;
}

/** Markers the lexer emits that are not source text (CST.SCALAR also says the next token is a scalar). */
const ZERO_WIDTH = new Set<string>([CST.DOCUMENT, CST.FLOW_END, CST.SCALAR]);
const BLOCK_INDICATORS = new Set(["seq-item-ind", "explicit-key-ind"]);

/**
 * The first place where open block levels plus open flow collections (`[`, `{`) exceed the
 * limit, or null. A block level is a line's indentation (a more indented line nests under it)
 * or an indicator (`-`, `?`) that opens a compact collection on the same line; this
 * counts at least as many levels as the parser builds.
 */
export function yamlDepthProblem(text: string, limit = MAX_YAML_DEPTH): DepthProblem | null {
  const indents: number[] = [];
  let flow = 0;
  let offset = 0;
  let lineStart = 0;
  let atLineStart = true;
  let scalarNext = false;
  for (const token of new Lexer().lex(text)) {
    // A flow collection the lexer ends on an error (CST.FLOW_END, a `---`) stays counted: the
    // parser's recovery still stacks it, and thousands of them cost it seconds.
    if (!scalarNext && ZERO_WIDTH.has(token)) {
      scalarNext = token === CST.SCALAR;
      continue;
    }
    const type = scalarNext ? "scalar" : CST.tokenType(token);
    scalarNext = false;
    const at = offset;
    offset += token.length;
    if (type === "newline") {
      lineStart = offset;
      atLineStart = true;
      continue;
    }
    const column = at - lineStart;
    // A multi-line scalar ends on a later line: columns after it count from there.
    const lastBreak = token.lastIndexOf("\n");
    if (lastBreak !== -1) lineStart = at + lastBreak + 1;
    if (type === "space" || type === "comment" || type === "byte-order-mark") continue;
    if (type === "doc-start" || type === "doc-end") {
      indents.length = 0;
      continue;
    }
    if (flow === 0 && atLineStart) {
      while (indents.length > 0 && indents[indents.length - 1] >= column) indents.pop();
      indents.push(column);
    }
    atLineStart = false;
    if (flow === 0 && type !== null && BLOCK_INDICATORS.has(type)) indents.push(column + 1);
    if (type === "flow-seq-start" || type === "flow-map-start") flow++;
    else if ((type === "flow-seq-end" || type === "flow-map-end") && flow > 0) flow--;
    if (indents.length + flow > limit) {
      const line = text.slice(0, at).split("\n").length;
      return { line, column: column + 1, message: `the manifest nests deeper than ${limit} levels` };
    }
  }
  return null;
}
