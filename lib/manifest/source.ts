import { type Document, LineCounter, type Node, isMap, isScalar, isSeq, parseAllDocuments } from "yaml";
import type { ManifestError } from "./errors";
import { yamlDepthProblem } from "./yaml-guard";

export type ManifestPath = readonly (string | number)[];

/** A limit on the YAML text itself, before any parsing work. */
export const MAX_MANIFEST_BYTES = 1_000_000;

/**
 * The parsed YAML documents of one manifest text with their positions, so any
 * later check (schema, references, formulas) can say where its problem is.
 */
export class ManifestSource {
  private constructor(
    readonly documents: Document.Parsed[],
    private readonly lines: LineCounter,
  ) {}

  /** Parses every `---`-separated document; syntax errors come back with positions, never thrown. */
  static parse(text: string): { source: ManifestSource; errors: ManifestError[] } {
    const lines = new LineCounter();
    if (text.length > MAX_MANIFEST_BYTES) {
      const source = new ManifestSource([], lines);
      return { source, errors: [{ document: 0, path: [], line: 1, column: 1, message: `manifest is larger than ${MAX_MANIFEST_BYTES} characters` }] };
    }
    const tooDeep = yamlDepthProblem(text);
    if (tooDeep) return { source: new ManifestSource([], lines), errors: [{ document: 0, path: [], ...tooDeep }] };
    const parsed = parseAllDocuments(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: true });
    const documents = "empty" in parsed ? [] : (parsed as Document.Parsed[]);
    const source = new ManifestSource(documents, lines);
    const errors: ManifestError[] = [];
    documents.forEach((doc, document) => {
      for (const error of [...doc.errors, ...doc.warnings.filter((w) => w.code !== "TAG_RESOLVE_FAILED")]) {
        const pos = error.linePos?.[0] ?? source.position(error.pos[0]);
        // The yaml package's pretty message repeats the position and a code excerpt; keep the first line.
        errors.push({ document, path: [], line: pos.line, column: pos.col, message: error.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "") });
      }
    });
    return { source, errors };
  }

  private position(offset: number): { line: number; col: number } {
    return this.lines.linePos(offset);
  }

  /** Where a path points: the value node when it exists, else the nearest existing key above it. */
  locate(document: number, path: ManifestPath, options: { key?: boolean } = {}): { line: number; column: number } {
    const doc = this.documents[document];
    if (!doc) return { line: 1, column: 1 };
    let node: unknown = doc.contents;
    let anchor: Node | null = (doc.contents as Node | null) ?? null;
    let keyNode: Node | null = null;
    for (const segment of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && p.key.value === segment);
        if (!pair) break;
        keyNode = pair.key as Node;
        node = pair.value;
        anchor = (pair.value as Node | null) ?? keyNode;
      } else if (isSeq(node) && typeof segment === "number" && node.items[segment] !== undefined) {
        node = node.items[segment];
        keyNode = null;
        anchor = node as Node;
      } else {
        break;
      }
    }
    const target = options.key && keyNode ? keyNode : (anchor ?? keyNode);
    const offset = target?.range?.[0] ?? 0;
    const pos = this.position(offset);
    return { line: pos.line, column: pos.col };
  }

  /** The position of character `offset` inside a scalar value (for formula and SQL errors). */
  locateInside(document: number, path: ManifestPath, offset: number): { line: number; column: number } {
    const doc = this.documents[document];
    const node = doc?.getIn(path, true);
    // Offsets map one to one only on a single-line plain or quoted scalar (escapes aside).
    if (isScalar(node) && node.range && this.position(node.range[0]).line === this.position(node.range[1]).line) {
      const quoted = node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE";
      if (node.type === "PLAIN" || quoted) {
        const pos = this.position(node.range[0] + (quoted ? 1 : 0) + offset);
        return { line: pos.line, column: pos.col };
      }
    }
    return this.locate(document, path);
  }

  error(document: number, path: ManifestPath, message: string, options: { key?: boolean; offset?: number } = {}): ManifestError {
    const at = options.offset !== undefined ? this.locateInside(document, path, options.offset) : this.locate(document, path, options);
    return { document, path: [...path], line: at.line, column: at.column, message };
  }
}
