import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { JSON_SCHEMA_FILES } from "./json-schema";

const served = path.join(import.meta.dirname, "..", "..", "public", "schemas");

// public/schemas is what /schemas/*.json serves to editors; it must be what the zod schemas generate.
describe("served JSON Schemas", () => {
  it.each(Object.entries(JSON_SCHEMA_FILES))("public/schemas/%s matches the zod schema (regenerate with `npm run manifest -- schemas`)", (name, build) => {
    expect(JSON.parse(fs.readFileSync(path.join(served, name), "utf8"))).toEqual(build());
  });

  it("a widget schema rejects an unknown component and knows every display block", () => {
    const widget = JSON_SCHEMA_FILES["widget.schema.json"]() as { properties: { spec: { properties: Record<string, { properties?: Record<string, unknown> }> } } };
    const spec = widget.properties.spec.properties;
    expect(Object.keys(spec.display.properties ?? {})).toEqual(expect.arrayContaining(["kpi", "echarts", "filter", "table", "tabulator", "text", "image", "markdown"]));
    expect(JSON.stringify(spec.component)).toContain("tabulator");
  });
});
