import { type Document, type Node, type Pair, isCollection, isMap, isPair, isScalar, isSeq, parseAllDocuments, parseDocument, Scalar, stringify } from "yaml";

/**
 * Writes a widget (or a dataset) into a manifest's YAML text so that only what changed changes (issue 44 §1):
 * the widget builder saves through here. The yaml package's Document API finds each node and its source range;
 * the edit is spliced into the text at that range, one change at a time, so every other byte — comments, key order,
 * quoting, flow or block style, blank lines, other documents — stays as it was. Re-serializing a document with
 * `toString()` would not do: it re-spaces flow collections (`[a, b]` → `[ a, b ]`) and re-wraps long lines.
 *
 * A change is the smallest one that turns the old value into the new: a scalar replaced, a key inserted into or
 * deleted from its map, an item appended to or removed from the end of a sequence; anything else replaces the value
 * whole (in the style of its place). New values are written in the manifests' house style: maps and sequences of
 * scalars in flow (`{ x: 0, y: 0 }`, `[a, b]`), nested ones in block.
 */

export type PlainValue = string | number | boolean | null | PlainValue[] | { [key: string]: PlainValue };
export type PlainMap = { [key: string]: PlainValue };
export type YamlPath = readonly (string | number)[];

/** Where a widget is written: a `---` document of its own, or an item of the dashboard's `spec.widgets`. */
export interface WidgetLocation {
  document: number;
  path: YamlPath;
}

function isPlainMap(value: unknown): value is PlainMap {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isPlainMap(a) && isPlainMap(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The last texts parsed, with their documents: one builder write reads and writes the same text several times
 * (dataset, widget, tabs), and parsing a whole manifest is what costs. Nothing here changes a parsed document.
 */
const recent: { text: string; docs: Document.Parsed[] }[] = [];
const RECENT_TEXTS = 4;

function parse(text: string): Document.Parsed[] {
  const hit = recent.find((r) => r.text === text);
  if (hit) return hit.docs;
  const docs = parseText(text);
  recent.unshift({ text, docs });
  recent.length = Math.min(recent.length, RECENT_TEXTS);
  return docs;
}

function parseText(text: string): Document.Parsed[] {
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  if ("empty" in docs) return [];
  const broken = docs.find((d) => d.errors.length > 0);
  if (broken) throw new Error(`the YAML does not parse: ${broken.errors[0].message.split("\n")[0]}`);
  return docs as Document.Parsed[];
}

function toPlain(node: unknown): PlainValue {
  if (node === null || node === undefined) return null;
  return (node as Node).toJSON() as PlainValue;
}

// ---------------------------------------------------------------- rendering new values in house style

/** A scalar as YAML; `inFlow`: inside `{ }` or `[ ]`, where a plain scalar may not hold a flow indicator. */
function renderScalar(value: string | number | boolean | null, like?: Scalar, inFlow = false): string {
  if (typeof value === "string") {
    if (like?.type === Scalar.QUOTE_DOUBLE || /[\n\r\t]/.test(value) || (inFlow && /[{}[\],]/.test(value))) return JSON.stringify(value);
    if (like?.type === Scalar.QUOTE_SINGLE) return `'${value.replaceAll("'", "''")}'`;
  }
  // A plain string the yaml package would quote (numbers, booleans, `: `, leading `*`) comes back quoted.
  const text = stringify(value, { lineWidth: 0 }).trimEnd();
  return text.includes("\n") ? JSON.stringify(value) : text;
}

/** One line: `{ a: 1, b: [x, y] }`, `[a, b]`, or a scalar. */
function renderFlow(value: PlainValue, like?: Scalar, inFlow = false): string {
  if (Array.isArray(value)) return `[${value.map((v) => renderFlow(v, undefined, true)).join(", ")}]`;
  if (isPlainMap(value)) {
    const entries = Object.entries(value);
    return entries.length === 0 ? "{}" : `{ ${entries.map(([k, v]) => `${renderScalar(k, undefined, true)}: ${renderFlow(v, undefined, true)}`).join(", ")} }`;
  }
  return renderScalar(value, like, inFlow);
}

/** Whether a value reads well on one line: scalars, and collections whose own items are scalars or flat maps. */
function isFlat(value: PlainValue, depth = 0): boolean {
  if (Array.isArray(value)) return depth < 2 && value.every((v) => isFlat(v, depth + 1));
  if (isPlainMap(value)) return depth < 2 && Object.values(value).every((v) => isFlat(v, depth + 1)) && renderFlow(value).length <= 100;
  return true;
}

/** `key: value` at an indent, block style for nested collections; lines without a trailing newline. */
function renderPair(key: string, value: PlainValue, indent: number): string {
  const pad = " ".repeat(indent);
  if (isFlat(value) || (Array.isArray(value) && value.length === 0) || (isPlainMap(value) && Object.keys(value).length === 0)) {
    return `${pad}${renderScalar(key)}: ${renderFlow(value)}`;
  }
  return `${pad}${renderScalar(key)}:\n${renderBlock(value, indent + 2)}`;
}

/** A map's entries or a sequence's items as block lines at an indent. */
function renderBlock(value: PlainValue, indent: number): string {
  if (Array.isArray(value)) return value.map((item) => renderItem(item, indent)).join("\n");
  if (isPlainMap(value)) return Object.entries(value).map(([k, v]) => renderPair(k, v, indent)).join("\n");
  return " ".repeat(indent) + renderScalar(value);
}

/** `- item` at the dash's indent: flat items on the dash's line, a nested map's first key there and the rest under it. */
function renderItem(item: PlainValue, dashIndent: number): string {
  const pad = " ".repeat(dashIndent);
  if (isFlat(item) || !isPlainMap(item) || Object.keys(item).length === 0) return `${pad}- ${renderFlow(item)}`;
  return `${pad}- ${renderBlock(item, dashIndent + 2).slice(dashIndent + 2)}`;
}

// ---------------------------------------------------------------- positions in the text

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf("\n", offset - 1) + 1;
}

/** The offset of the newline ending the line that holds `offset` (or the text's end). */
function lineEnd(text: string, offset: number): number {
  const at = text.indexOf("\n", offset);
  return at === -1 ? text.length : at;
}

/**
 * Where a node's value ends: for a block collection, where its last item's value ends (the parser's own range runs on
 * over a trailing comment and newline); a block scalar's trailing newlines are not its content either.
 */
function valueEnd(text: string, node: Node): number {
  if (isCollection(node) && !node.flow && node.items.length > 0) return entryRange(text, node.items[node.items.length - 1] as Pair | Node)[1];
  let end = node.range![1];
  while (end > node.range![0] && /\s/.test(text[end - 1])) end--;
  return end;
}

function columnOf(text: string, offset: number): number {
  return offset - lineStart(text, offset);
}

function keyOf(pair: Pair): unknown {
  return isScalar(pair.key) ? pair.key.value : pair.key;
}

// ---------------------------------------------------------------- one change at a time

type Change =
  | { kind: "replace"; path: YamlPath; value: PlainValue }
  | { kind: "insert"; path: YamlPath; key: string; value: PlainValue }
  | { kind: "delete"; path: YamlPath }
  | { kind: "append"; path: YamlPath; value: PlainValue };

/** The first change that brings `node` (at `path`) closer to `want`; null once they are equal. */
function firstChange(node: unknown, want: PlainValue, path: YamlPath): Change | null {
  // A block collection emptied is written again whole (`key: {}`): deleting its last line would leave `key:`, null.
  const emptied = (isPlainMap(want) && Object.keys(want).length === 0) || (Array.isArray(want) && want.length === 0);
  if (emptied && path.length > 0 && isCollection(node) && !node.flow && node.items.length > 0) return { kind: "replace", path, value: want };
  if (isMap(node) && isPlainMap(want)) {
    for (const pair of node.items) {
      const key = keyOf(pair);
      if (typeof key !== "string" || !(key in want)) return { kind: "delete", path: [...path, key as string] };
    }
    for (const [key, value] of Object.entries(want)) {
      const pair = node.items.find((p) => keyOf(p) === key);
      if (!pair) return { kind: "insert", path, key, value };
      const change = firstChange(pair.value, value, [...path, key]);
      if (change) return change;
    }
    return null;
  }
  if (isSeq(node) && Array.isArray(want)) {
    const common = Math.min(node.items.length, want.length);
    const prefixEqual = node.items.slice(0, common).every((item, i) => deepEqual(toPlain(item), want[i]));
    if (node.items.length !== want.length && prefixEqual) {
      return want.length > node.items.length ? { kind: "append", path, value: want[common] } : { kind: "delete", path: [...path, node.items.length - 1] };
    }
    if (node.items.length === want.length) {
      for (let i = 0; i < common; i++) {
        const change = firstChange(node.items[i], want[i], [...path, i]);
        if (change) return change;
      }
      return null;
    }
    return { kind: "replace", path, value: want };
  }
  return deepEqual(toPlain(node), want) ? null : { kind: "replace", path, value: want };
}

function splice(text: string, from: number, to: number, insert: string): string {
  return text.slice(0, from) + insert + text.slice(to);
}

/** The collection holding `path`'s last segment, and that segment's pair or item. */
function parentOf(doc: Document.Parsed, path: YamlPath): { parent: Node; entry: Pair | Node; index: number } {
  const parent = (path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true)) as Node;
  const last = path[path.length - 1];
  if (isMap(parent)) {
    const index = parent.items.findIndex((p) => keyOf(p) === last);
    return { parent, entry: parent.items[index], index };
  }
  if (isSeq(parent)) return { parent, entry: parent.items[last as number] as Node, index: last as number };
  throw new Error(`no collection at ${path.slice(0, -1).join(".")}`);
}

/** Start and end offsets of a map pair or sequence item (the end is where its value ends). */
function entryRange(text: string, entry: Pair | Node): [number, number] {
  if (isPair(entry)) {
    const key = entry.key as Node;
    return [key.range![0], entry.value ? valueEnd(text, entry.value as Node) : key.range![1]];
  }
  return [entry.range![0], valueEnd(text, entry)];
}

/** The offset of the `-` of a block sequence item that starts at `itemStart`. */
function dashBefore(text: string, itemStart: number): number {
  return text.lastIndexOf("-", itemStart - 1);
}

function applyChange(text: string, doc: Document.Parsed, change: Change): string {
  if (change.kind === "insert") {
    const map = (change.path.length === 0 ? doc.contents : doc.getIn(change.path, true)) as Node;
    if (!isMap(map)) throw new Error(`no map at ${change.path.join(".")}`);
    if (map.flow) {
      if (map.items.length === 0) return splice(text, map.range![0], map.range![1], renderFlow({ [change.key]: change.value }));
      const end = entryRange(text, map.items[map.items.length - 1])[1];
      return splice(text, end, end, `, ${renderScalar(change.key, undefined, true)}: ${renderFlow(change.value, undefined, true)}`);
    }
    const first = entryRange(text, map.items[0])[0];
    const at = lineEnd(text, entryRange(text, map.items[map.items.length - 1])[1]);
    return splice(text, at, at, `\n${renderPair(change.key, change.value, columnOf(text, first))}`);
  }
  if (change.kind === "append") {
    const seq = doc.getIn(change.path, true) as Node;
    if (!isSeq(seq)) throw new Error(`no sequence at ${change.path.join(".")}`);
    if (seq.flow || seq.items.length === 0) {
      if (seq.items.length === 0) return splice(text, seq.range![0], seq.range![1], renderFlow([change.value]));
      const end = entryRange(text, seq.items[seq.items.length - 1] as Node)[1];
      return splice(text, end, end, `, ${renderFlow(change.value, undefined, true)}`);
    }
    const dash = dashBefore(text, (seq.items[0] as Node).range![0]);
    const at = lineEnd(text, entryRange(text, seq.items[seq.items.length - 1] as Node)[1]);
    return splice(text, at, at, `\n${renderItem(change.value, columnOf(text, dash))}`);
  }
  const { parent, entry, index } = parentOf(doc, change.path);
  const collection = parent as Node & { items: unknown[]; flow?: boolean };
  if (change.kind === "delete") {
    const [start, end] = entryRange(text, entry);
    if (collection.flow) {
      if (index > 0) return splice(text, entryRange(text, collection.items[index - 1] as Pair | Node)[1], end, "");
      if (collection.items.length > 1) return splice(text, start, entryRange(text, collection.items[1] as Pair | Node)[0], "");
      return splice(text, parent.range![0], parent.range![1], isMap(parent) ? "{}" : "[]");
    }
    const from = lineStart(text, isSeq(parent) ? dashBefore(text, start) : start);
    const to = Math.min(text.length, lineEnd(text, end) + 1);
    return splice(text, from, to, "");
  }
  // replace
  const node = (isMap(parent) ? (entry as Pair).value : entry) as Node | null;
  const inBlock = !collection.flow;
  const blockValue = node && isCollection(node) && !node.flow;
  // `key:` with nothing after it has an empty null scalar whose range says nothing useful: the pair is written again.
  const emptyScalar = isScalar(node) && node.range![0] === node.range![1];
  if (node && !blockValue && !emptyScalar && !(isScalar(node) && (node.type === Scalar.BLOCK_LITERAL || node.type === Scalar.BLOCK_FOLDED))) {
    if (!inBlock || isFlat(change.value)) return splice(text, node.range![0], node.range![1], renderFlow(change.value, isScalar(node) ? node : undefined, !inBlock));
  }
  // A block value (or one that needs block lines) is written again as a whole pair or item, at its indent.
  const [start, end] = entryRange(text, entry);
  const to = lineEnd(text, end);
  if (isMap(parent)) return splice(text, lineStart(text, start), to, renderPair(String(change.path[change.path.length - 1]), change.value, columnOf(text, start)));
  const dash = dashBefore(text, start);
  return splice(text, lineStart(text, dash), to, renderItem(change.value, columnOf(text, dash)));
}

/** The most changes one edit makes before it gives up (a value the splicing cannot reach would otherwise loop). */
const MAX_CHANGES = 10_000;

/**
 * Sets the value at `path` of document `document` to `value`, changing only what differs. The path's parent must
 * exist; `undefined` deletes the key or item. Throws when the text does not parse.
 */
export function setYamlValue(text: string, document: number, path: YamlPath, value: PlainValue | undefined): string {
  const whole = parse(text)[document];
  if (!whole) throw new Error(`the text has no document ${document}`);
  // The document's own text is edited alone (parsing it again after each change costs only its length).
  const [from, , to] = whole.range;
  let current = text.slice(from, to);
  for (let step = 0; step < MAX_CHANGES; step++) {
    const doc = parseDocument(current, { uniqueKeys: true });
    if (doc.errors.length > 0) throw new Error(`the edit broke the YAML: ${doc.errors[0].message.split("\n")[0]}`);
    let change: Change | null;
    if (path.length === 0) {
      if (value === undefined) throw new Error("a whole document is not deleted here");
      change = firstChange(doc.contents, value, []);
    } else if (value === undefined) {
      change = doc.hasIn(path) ? { kind: "delete", path } : null;
    } else if (doc.hasIn(path)) {
      change = firstChange(doc.getIn(path, true), value, path);
    } else {
      change = { kind: "insert", path: path.slice(0, -1), key: String(path[path.length - 1]), value };
    }
    if (!change) return text.slice(0, from) + current + text.slice(to);
    current = applyChange(current, doc, change);
  }
  throw new Error("the edit did not settle");
}

/** Appends a document of its own after the text's last one (`---` and block style). */
export function appendDocument(text: string, value: PlainMap): string {
  const body = renderBlock(value, 0);
  const separator = text.length === 0 ? "" : text.endsWith("\n") ? "---\n" : "\n---\n";
  return `${text}${separator}${body}\n`;
}

function isWidget(value: unknown, id: string): boolean {
  return isPlainMap(value) && value.kind === "widget" && isPlainMap(value.metadata) && value.metadata.id === id;
}

/** Where the widget with this `metadata.id` is written, or null when no widget has it. */
export function locateWidget(text: string, id: string): WidgetLocation | null {
  const docs = parse(text);
  for (const [document, doc] of docs.entries()) {
    if (isWidget(toPlain(doc.contents), id)) return { document, path: [] };
  }
  const inline = docs[0]?.getIn(["spec", "widgets"], true);
  if (isSeq(inline)) {
    const index = inline.items.findIndex((item) => isWidget(toPlain(item), id));
    if (index >= 0) return { document: 0, path: ["spec", "widgets", index] };
  }
  return null;
}

/** The widget with this id as plain data (what the builder opens), or null. */
export function readWidget(text: string, id: string): PlainMap | null {
  const at = locateWidget(text, id);
  if (!at) return null;
  const doc = parse(text)[at.document];
  const value = toPlain(at.path.length === 0 ? doc.contents : doc.getIn(at.path, true));
  return isPlainMap(value) ? value : null;
}

/** Writes a widget manifest: its own document when new, else only its changed parts where it already is. */
export function writeWidget(text: string, widget: PlainMap): string {
  const metadata = widget.metadata;
  if (!isPlainMap(metadata) || typeof metadata.id !== "string") throw new Error("a widget needs metadata.id");
  const at = locateWidget(text, metadata.id);
  return at ? setYamlValue(text, at.document, at.path, widget) : appendDocument(text, widget);
}

/**
 * Writes a dataset into the dashboard's `spec.datasets` (document 0): only its changed parts when one with its id
 * exists, else appended (the `datasets` key added to `spec` when it has none).
 */
export function writeDataset(text: string, dataset: PlainMap): string {
  const doc = parse(text)[0];
  if (!doc || !isMap(doc.contents)) throw new Error("the text has no dashboard document");
  const datasets = doc.getIn(["spec", "datasets"], true);
  if (!isSeq(datasets)) return setYamlValue(text, 0, ["spec", "datasets"], [dataset]);
  const index = datasets.items.findIndex((item) => isPlainMap(toPlain(item)) && (toPlain(item) as PlainMap).id === dataset.id);
  if (index < 0) return setYamlValue(text, 0, ["spec", "datasets"], [...(toPlain(datasets) as PlainValue[]), dataset]);
  return setYamlValue(text, 0, ["spec", "datasets", index], dataset);
}

/** The value at `path` of the dashboard document (document 0) as plain data; undefined when there is none. */
export function readDashboardValue(text: string, path: YamlPath): PlainValue | undefined {
  const doc = parse(text)[0];
  return doc?.hasIn(path) ? toPlain(doc.getIn(path, true)) : undefined;
}

/** The dataset with this id in the dashboard's `spec.datasets` as plain data, or null. */
export function readDataset(text: string, id: string): PlainMap | null {
  const datasets = readDashboardValue(text, ["spec", "datasets"]);
  const found = Array.isArray(datasets) ? datasets.find((d) => isPlainMap(d) && d.id === id) : undefined;
  return isPlainMap(found) ? found : null;
}
