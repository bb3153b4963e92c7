import { type Document, type Node, isAlias, isMap, isScalar, isSeq, parseAllDocuments, stringify, visit } from "yaml";
import type { Breakpoint } from "./schema";

/** A widget's box on the 12-column grid, as `spec.layout` (or one of its `responsive` entries) writes it. */
export interface LayoutBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Which of a widget's boxes a move writes: the base layout, or the one of a breakpoint (`layout.responsive.<bp>`). */
export type LayoutTarget = "base" | Breakpoint;

export interface LayoutMove {
  widgetId: string;
  at: LayoutTarget;
  box: LayoutBox;
}

export type LayoutEditResult = { ok: true; text: string } | { ok: false; message: string };

const BOX_KEYS = ["x", "y", "w", "h"] as const;

interface Splice {
  from: number;
  to: number;
  insert: string;
}

class LayoutEditError extends Error {}

/**
 * The manifest text after the given layout moves, edited in place: only the characters of the moved boxes' numbers
 * change (or, for a breakpoint box the widget did not have yet, one `bp: { x, y, w, h }` entry is inserted), so
 * comments, key order, quoting, anchors and the formatting of everything else stay byte for byte. Nodes are found
 * through the `yaml` package's document API (each node's source range); nothing is re-stringified but the new values.
 *
 * Aliases on the way to a moved number (`layout: *box`, `h: *tall`) are replaced by the value they stood for, with
 * the move applied, so only this widget changes. A moved node that is itself an anchor other nodes refer to is
 * refused: changing it would move those too.
 */
export function applyLayoutMoves(text: string, moves: readonly LayoutMove[]): LayoutEditResult {
  let current = text;
  try {
    // One move at a time, each on the text the previous one left, so two moves never splice the same place.
    for (const move of moves) current = applySplices(current, movesSplices(current, move));
  } catch (error) {
    if (error instanceof LayoutEditError) return { ok: false, message: error.message };
    throw error;
  }
  return { ok: true, text: current };
}

function applySplices(text: string, splices: readonly Splice[]): string {
  let out = text;
  for (const s of [...splices].sort((a, b) => b.from - a.from)) out = out.slice(0, s.from) + s.insert + out.slice(s.to);
  return out;
}

function movesSplices(text: string, move: LayoutMove): Splice[] {
  for (const key of BOX_KEYS) {
    const value = move.box[key];
    const min = key === "w" || key === "h" ? 1 : 0;
    if (!Number.isInteger(value) || value < min) throw new LayoutEditError(`layout.${key} of ${move.widgetId} must be an integer of at least ${min}, not ${value}`);
  }
  const parsed = parseAllDocuments(text);
  if ("empty" in parsed) throw new LayoutEditError("the manifest is empty");
  const documents = parsed as Document.Parsed[];
  for (const doc of documents) {
    if (doc.errors.length > 0) throw new LayoutEditError("the manifest has YAML errors; fix them before arranging widgets");
  }
  for (const doc of documents) {
    const widget = findWidget(doc, move.widgetId);
    if (widget) return boxSplices(text, doc, widget, move);
  }
  throw new LayoutEditError(`no widget with id ${move.widgetId} in the manifest`);
}

/** The widget's map: a `kind: widget` document, or an entry of the dashboard's `spec.widgets`. */
function findWidget(doc: Document, widgetId: string): Node | null {
  const root = doc.contents;
  if (!isMap(root)) return null;
  const kind = root.get("kind");
  if (kind === "widget") return idOf(doc, root) === widgetId ? root : null;
  if (kind !== "dashboard") return null;
  const inline = doc.getIn(["spec", "widgets"], true);
  if (!isSeq(inline)) return null;
  for (const item of inline.items) {
    const node = resolved(doc, item as Node);
    if (isMap(node) && idOf(doc, node) === widgetId) return item as Node;
  }
  return null;
}

function idOf(doc: Document, widget: Node): unknown {
  const metadata = resolved(doc, mapValue(widget, "metadata"));
  return isMap(metadata) ? (resolved(doc, mapValue(metadata, "id")) as { value?: unknown } | null)?.value : undefined;
}

function mapValue(node: Node | null, key: string): Node | null {
  if (!isMap(node)) return null;
  const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key);
  return (pair?.value as Node | null | undefined) ?? null;
}

function resolved(doc: Document, node: Node | null): Node | null {
  return isAlias(node) ? ((node.resolve(doc) as Node | undefined) ?? null) : node;
}

/** Anchor names some alias of the document refers to. */
function aliasedAnchors(doc: Document): Set<string> {
  const names = new Set<string>();
  visit(doc, { Alias: (_, alias) => void names.add(alias.source) });
  return names;
}

function refuseShared(node: Node, shared: Set<string>, where: string): void {
  const anchor = (node as { anchor?: string }).anchor;
  if (anchor && shared.has(anchor)) {
    throw new LayoutEditError(`${where} is the anchor &${anchor}, which other nodes refer to: moving it here would move them too. Edit it in the YAML instead`);
  }
}

/** A plain value written as one flow collection on one line, as the sample writes layouts. */
function flowText(value: unknown): string {
  return stringify(value, { collectionStyle: "flow", lineWidth: 0 }).trim();
}

function boxSplices(text: string, doc: Document, widget: Node, move: LayoutMove): Splice[] {
  const shared = aliasedAnchors(doc);
  const where = move.at === "base" ? `${move.widgetId}'s layout` : `${move.widgetId}'s layout.responsive.${move.at}`;
  if (isAlias(widget)) throw new LayoutEditError(`${move.widgetId} is an alias of another widget's manifest: edit it in the YAML instead`);
  refuseShared(widget, shared, `${move.widgetId}'s manifest`);
  const spec = mapValue(widget, "spec");
  if (isAlias(spec) || !isMap(spec)) throw new LayoutEditError(`${move.widgetId} has no spec map to write its layout in`);
  refuseShared(spec, shared, `${move.widgetId}'s spec`);
  const layout = mapValue(spec, "layout");
  if (!layout) throw new LayoutEditError(`${move.widgetId} has no layout`);
  return nodeSplices(text, doc, layout, move.at === "base" ? [] : ["responsive", move.at], move.box, shared, where);
}

/**
 * Splices that make `node` (a map, or an alias of one) hold `box` under `keys`: numbers replaced where they are,
 * missing maps inserted as one flow entry, aliases on the way replaced by what they stood for with the box applied.
 */
function nodeSplices(text: string, doc: Document, node: Node, keys: readonly string[], box: LayoutBox, shared: Set<string>, where: string): Splice[] {
  if (isAlias(node)) {
    const value = withBox(node.toJS(doc) as unknown, keys, box);
    return [{ from: node.range![0], to: node.range![1], insert: flowText(value) }];
  }
  if (!isMap(node)) throw new LayoutEditError(`${where} is not a map`);
  refuseShared(node, shared, where);
  if (keys.length > 0) {
    const [key, ...rest] = keys;
    const child = mapValue(node, key);
    if (child === null) return [insertPair(text, node, key, withBox(undefined, rest, box))];
    return nodeSplices(text, doc, child, rest, box, shared, where);
  }
  const splices: Splice[] = [];
  for (const key of BOX_KEYS) {
    const value = mapValue(node, key);
    const wanted = String(box[key]);
    // The schema requires all four keys, so a manifest that validates has them.
    if (value === null) throw new LayoutEditError(`${where} has no ${key}`);
    if (isScalar(value)) {
      refuseShared(value, shared, `${where}.${key}`);
      if (value.value === box[key]) continue;
    } else if (!isAlias(value)) {
      throw new LayoutEditError(`${where}.${key} is not a number`);
    } else if (value.resolve(doc) && (value.resolve(doc) as { value?: unknown }).value === box[key]) {
      continue;
    }
    splices.push({ from: value.range![0], to: value.range![1], insert: wanted });
  }
  return splices;
}

/** `base` with `box` set at `keys` (a fresh object where base has nothing). */
function withBox(base: unknown, keys: readonly string[], box: LayoutBox): unknown {
  if (keys.length === 0) return { ...(isPlainObject(base) ? base : {}), ...box };
  const [key, ...rest] = keys;
  const object = isPlainObject(base) ? base : {};
  return { ...object, [key]: withBox(object[key], rest, box) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One new `key: value` entry at the end of a map, in the map's own style: `, key: v` in a flow map, a new line in a block one. */
function insertPair(text: string, map: Node & { flow?: boolean; items: { key: unknown; value: unknown }[] }, key: string, value: unknown): Splice {
  const entry = `${key}: ${typeof value === "object" ? flowText(value) : String(value)}`;
  const [start, end] = map.range!;
  if (map.flow) {
    const close = text.lastIndexOf("}", end - 1);
    let at = close;
    while (at > start + 1 && /\s/.test(text[at - 1])) at -= 1;
    const empty = map.items.length === 0;
    const comma = empty || text[at - 1] === "," ? "" : ",";
    return { from: at, to: at, insert: `${comma} ${entry}${empty ? " " : ""}` };
  }
  const last = map.items[map.items.length - 1];
  if (!last) throw new LayoutEditError(`cannot add ${key} to an empty block map`);
  const lastEnd = ((last.value as Node | null)?.range ?? (last.key as Node).range!)[1];
  const firstKey = map.items[0].key as Node;
  const indent = firstKey.range![0] - (text.lastIndexOf("\n", firstKey.range![0] - 1) + 1);
  // After the line the map's last value ends on (past any comment on it), before what follows.
  const newline = text.indexOf("\n", Math.max(lastEnd - 1, 0));
  if (newline === -1) return { from: text.length, to: text.length, insert: `\n${" ".repeat(indent)}${entry}` };
  // A file with CRLF line ends gets one more of those, never a bare LF amid them.
  const crlf = text[newline - 1] === "\r";
  const at = crlf ? newline - 1 : newline;
  return { from: at, to: at, insert: `${crlf ? "\r\n" : "\n"}${" ".repeat(indent)}${entry}` };
}
