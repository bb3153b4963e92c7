/**
 * A cheap scan of YAML text before the parser sees it. The yaml package recurses per nesting
 * level, and a document nested a thousand levels deep aborts the process inside it (a RegExp
 * allocation failure, not a catchable error). Manifests are a handful of levels deep, so text
 * nested past MAX_YAML_DEPTH is refused with its position instead.
 */
export const MAX_YAML_DEPTH = 64;

export interface DepthProblem {
  line: number;
  column: number;
  message: string;
}

/**
 * The first place where block indentation levels plus open flow collections (`[`, `{`) exceed
 * the limit, or null. Quoted strings, comments and block scalar contents (`|`, `>`) are skipped.
 */
export function yamlDepthProblem(text: string, limit = MAX_YAML_DEPTH): DepthProblem | null {
  const indents: number[] = [];
  let flow = 0;
  let blockScalarIndent: number | null = null;
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    const indent = line.length - line.trimStart().length;
    if (blockScalarIndent !== null) {
      if (line.trim() === "" || indent > blockScalarIndent) continue;
      blockScalarIndent = null;
    }
    const body = line.trimStart();
    if (body === "" || body.startsWith("#") || body.startsWith("---") || body.startsWith("...")) continue;
    // "- - - x" and "? x" open one level each on the same line.
    let level = indent;
    let markers = /^([-?:](\s+|$))+/.exec(body)?.[0] ?? "";
    if (body.startsWith(":")) markers = "";
    const levelsOnLine = (markers.match(/[-?]/g) ?? []).length;
    if (flow === 0) {
      while (indents.length > 0 && indents[indents.length - 1] >= level) indents.pop();
      indents.push(level);
      for (let i = 0; i < levelsOnLine; i++) indents.push(++level);
    }
    let quote: '"' | "'" | null = null;
    for (let i = 0; i < body.length; i++) {
      const c = body[i];
      if (quote) {
        if (c === "\\" && quote === '"') i++;
        else if (c === quote) quote = null;
        continue;
      }
      if ((c === '"' || c === "'") && (i === 0 || /[\s,[{:]/.test(body[i - 1]))) quote = c;
      else if (c === "#" && (i === 0 || /\s/.test(body[i - 1]))) break;
      else if (c === "[" || c === "{") flow++;
      else if ((c === "]" || c === "}") && flow > 0) flow--;
      if (indents.length + flow > limit) {
        return { line: n + 1, column: indent + i + 1, message: `the manifest nests deeper than ${limit} levels` };
      }
    }
    if (indents.length + flow > limit) return { line: n + 1, column: indent + 1, message: `the manifest nests deeper than ${limit} levels` };
    if (flow === 0 && /(^|[\s:-])[|>][-+0-9]*\s*(#.*)?$/.test(body)) blockScalarIndent = indent;
  }
  return null;
}
