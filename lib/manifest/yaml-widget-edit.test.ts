import fs from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { parseAllDocuments, parseDocument } from "yaml";
import { type PlainValue, appendDocument, locateWidget, readWidget, setYamlValue, writeDataset, writeWidget } from "./yaml-widget-edit";

const SAMPLE = fs.readFileSync(path.join(import.meta.dirname, "../../docs/manifests/sample-dashboard.yaml"), "utf8");

/** Each document's text as written, by the `---` ranges the parser reports. */
function documentTexts(text: string): string[] {
  const docs = parseAllDocuments(text);
  return "empty" in docs ? [] : docs.map((d) => text.slice(d.range[0], d.range[2]));
}

function plainDocuments(text: string): unknown[] {
  const docs = parseAllDocuments(text);
  if ("empty" in docs) return [];
  for (const d of docs) expect(d.errors).toEqual([]);
  return docs.map((d) => d.toJS());
}

type Plain = { [key: string]: PlainValue };

// The property tests edit a few of the sample's widget documents (flow and block maps, comments), kept small:
// every change parses the document again.
const SOME_WIDGETS = (() => {
  const texts = documentTexts(SAMPLE);
  const pick = (id: string) => texts.find((t) => t.includes(`id: ${id},`))!;
  return ['version: "1.0"\nkind: dashboard\nmetadata: { id: d, name: D }  # short\n', ...["revenue_trend", "revenue_by_location", "margin_gauge"].map(pick)].join("");
})();

const widgetIds = (text: string) =>
  plainDocuments(text)
    .slice(1)
    .map((d) => (d as { metadata: { id: string } }).metadata.id);

// Values as a builder writes them: identifiers, words with spaces and punctuation, numbers, booleans, null.
const scalar = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/),
  fc.string({ maxLength: 12 }),
  fc.constantFrom("1.0", "yes", "null", "# not a comment", "a: b", "- item", "x\ny", "'quoted'", '"dq"', ""),
  fc.integer({ min: -1000, max: 100_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
  fc.boolean(),
  fc.constant(null),
);
const key = fc.stringMatching(/^[a-z][a-z_]{0,7}$/);
const value: fc.Arbitrary<PlainValue> = fc.letrec<{ value: PlainValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
  ),
})).value;

/** A path into an existing widget document of the sample, and its value there. */
function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const here = prefix.length > 0 ? [prefix] : [];
  if (Array.isArray(value)) return [...here, ...value.flatMap((v, i) => pathsOf(v, [...prefix, i]))];
  if (typeof value === "object" && value !== null) return [...here, ...Object.entries(value).flatMap(([k, v]) => pathsOf(v, [...prefix, k]))];
  return here;
}

function getIn(value: unknown, at: readonly (string | number)[]): unknown {
  return at.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)?.[k], value);
}

describe("setYamlValue", () => {
  test("the same value changes no byte", () => {
    const docs = plainDocuments(SOME_WIDGETS);
    docs.forEach((doc, i) => expect(setYamlValue(SOME_WIDGETS, i, [], doc as PlainValue)).toBe(SOME_WIDGETS));
  });

  test("a scalar in a flow map is replaced in place, the rest of the line as written", () => {
    const text = "a: { x: 0, y:   1 }   # where\nb: [p, q]\n";
    expect(setYamlValue(text, 0, ["a", "x"], 5)).toBe("a: { x: 5, y:   1 }   # where\nb: [p, q]\n");
    expect(setYamlValue(text, 0, ["a", "z"], "new word")).toBe("a: { x: 0, y:   1, z: new word }   # where\nb: [p, q]\n");
    expect(setYamlValue(text, 0, ["a", "y"], undefined)).toBe("a: { x: 0 }   # where\nb: [p, q]\n");
    expect(setYamlValue(text, 0, ["b"], ["p", "q", "r"])).toBe("a: { x: 0, y:   1 }   # where\nb: [p, q, r]\n");
    expect(setYamlValue(text, 0, ["b"], ["p"])).toBe("a: { x: 0, y:   1 }   # where\nb: [p]\n");
  });

  test("block maps and sequences take new keys and items at their indent; comments stay", () => {
    const text = "spec:\n  # the kind\n  component: echarts\n  datasets:\n    - id: a\n      from: t   # the table\nend: 1\n";
    const out = setYamlValue(text, 0, ["spec"], { component: "kpi", datasets: [{ id: "a", from: "t" }, { id: "b", from: "u", dimensions: [{ id: "d", column: "u.d" }] }], data: { kind: "dataset", columns: ["x"] } });
    expect(out).toBe(
      "spec:\n  # the kind\n  component: kpi\n  datasets:\n    - id: a\n      from: t   # the table\n    - id: b\n      from: u\n      dimensions: [{ id: d, column: u.d }]\n  data: { kind: dataset, columns: [x] }\nend: 1\n",
    );
    expect(parseDocument(out).toJS()).toEqual({ spec: { component: "kpi", datasets: [{ id: "a", from: "t" }, { id: "b", from: "u", dimensions: [{ id: "d", column: "u.d" }] }], data: { kind: "dataset", columns: ["x"] } }, end: 1 });
  });

  test("a deleted block key takes its lines with it", () => {
    const text = "a:\n  b:\n    - 1\n    - 2\n  c: 3\nd: 4\n";
    expect(setYamlValue(text, 0, ["a", "b"], undefined)).toBe("a:\n  c: 3\nd: 4\n");
    expect(setYamlValue(text, 0, ["a", "b"], [1])).toBe("a:\n  b:\n    - 1\n  c: 3\nd: 4\n");
  });

  test("an emptied block map is written `key: {}`, and an empty `key:` takes a value in place", () => {
    expect(setYamlValue("spec:\n  display:\n    echarts:\n      option: { a: 1 }\n  # c\n  on_click: 1\n", 0, ["spec", "display"], {})).toBe("spec:\n  display: {}\n  # c\n  on_click: 1\n");
    expect(setYamlValue("spec:\n  display:\n  on_click: 1\n", 0, ["spec", "display"], { a: 1 })).toBe("spec:\n  display: { a: 1 }\n  on_click: 1\n");
  });

  test("property: any value written anywhere in a widget reads back, and every other document keeps its bytes", () => {
    const before = documentTexts(SOME_WIDGETS);
    const docs = plainDocuments(SOME_WIDGETS);
    const targets = docs.slice(1).flatMap((doc, i) => pathsOf(doc).map((p) => ({ document: i + 1, path: p })));
    fc.assert(
      fc.property(fc.constantFrom(...targets), value, ({ document, path: at }, next) => {
        const out = setYamlValue(SOME_WIDGETS, document, at, next);
        const after = plainDocuments(out);
        const expected = structuredClone(docs[document]) as Record<string | number, unknown>;
        (getIn(expected, at.slice(0, -1)) as Record<string | number, unknown>)[at[at.length - 1]] = next;
        expect(after[document]).toEqual(expected);
        const texts = documentTexts(out);
        texts.forEach((t, i) => {
          if (i !== document) expect(t).toBe(before[i]);
        });
      }),
      { numRuns: 120 },
    );
  });

  test("property: a new key reads back and leaves every existing line of its document as written", () => {
    const docs = plainDocuments(SOME_WIDGETS);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: docs.length - 1 }), value, (document, next) => {
        const out = setYamlValue(SOME_WIDGETS, document, ["spec", "zz_added"], next);
        const before = documentTexts(SOME_WIDGETS)[document].split("\n");
        const after = documentTexts(out)[document].split("\n");
        // Every old line is still there, in order.
        let at = 0;
        for (const line of before) {
          at = after.indexOf(line, at);
          expect(at).toBeGreaterThanOrEqual(0);
          at++;
        }
        expect((plainDocuments(out)[document] as { spec: Plain }).spec.zz_added).toEqual(next);
      }),
      { numRuns: 80 },
    );
  });
});

describe("widgets and datasets", () => {
  test("a widget is found in its own document and inline under spec.widgets", () => {
    expect(locateWidget(SAMPLE, "revenue_by_location")).toEqual({ document: expect.any(Number), path: [] });
    const inline = 'version: "1.0"\nkind: dashboard\nmetadata: { id: d, name: D }\nspec:\n  widgets:\n    - version: "1.0"\n      kind: widget\n      metadata: { id: w, name: W }\n      spec: { component: text, layout: { x: 0, y: 0, w: 1, h: 1 } }\n';
    expect(locateWidget(inline, "w")).toEqual({ document: 0, path: ["spec", "widgets", 0] });
    expect(locateWidget(inline, "nope")).toBeNull();
    const renamed = writeWidget(inline, { ...readWidget(inline, "w")!, metadata: { id: "w", name: "Renamed" } });
    expect(renamed).toBe(inline.replace("name: W }", "name: Renamed }"));
  });

  test("a new widget is appended as a document of its own; the text before it is unchanged", () => {
    const widget = { version: "1.0", kind: "widget", metadata: { id: "new_one", name: "New: one" }, spec: { component: "echarts", layout: { x: 0, y: 20, w: 6, h: 4 } } };
    const out = writeWidget(SAMPLE, widget);
    expect(out.startsWith(SAMPLE)).toBe(true);
    expect(readWidget(out, "new_one")).toEqual(widget);
    expect(widgetIds(out)).toEqual([...widgetIds(SAMPLE), "new_one"]);
    expect(appendDocument("a: 1", { b: 2 })).toBe("a: 1\n---\nb: 2\n");
  });

  test("a dataset is added to spec.datasets, or only its changed keys written", () => {
    const added = writeDataset(SAMPLE, { id: "mine", from: "my_table", metrics: [{ id: "n", type: "sql", expression: "count(*)" }] });
    expect((plainDocuments(added)[0] as { spec: { datasets: Plain[] } }).spec.datasets.at(-1)).toEqual({ id: "mine", from: "my_table", metrics: [{ id: "n", type: "sql", expression: "count(*)" }] });
    const sales = (plainDocuments(SAMPLE)[0] as { spec: { datasets: Plain[] } }).spec.datasets[0];
    const limited = writeDataset(SAMPLE, { ...sales, limit: 10 });
    const changed = SAMPLE.split("\n").filter((line) => !limited.split("\n").includes(line));
    expect(changed).toEqual([]);
    expect(limited.split("\n").length).toBe(SAMPLE.split("\n").length + 1);
  });

  test("a text that does not parse is refused, not rewritten", () => {
    expect(() => writeWidget("a: [1,\n", { metadata: { id: "x" } })).toThrow(/does not parse/);
  });
});
