import { describe, expect, it } from "vitest";
import { sampleWidget } from "./sample-widgets";
import { widgetState } from "./widget-state";

const rows = { rows: [{ value: 1 }], error: null };
const none = { rows: [], error: null };
const failed = { rows: [], error: { detail: "column \"x\" does not exist" } };

describe("widgetState", () => {
  it("shows a skeleton until a data widget's first result, then the data, the empty state or the error", () => {
    const kpi = sampleWidget("revenue_kpi");
    expect(widgetState(kpi, undefined)).toBe("skeleton");
    expect(widgetState(kpi, rows)).toBe("ready");
    expect(widgetState(kpi, none)).toBe("empty");
    expect(widgetState(kpi, failed)).toBe("error");
  });

  it("shows a field policy's notice (not an error, not 'no data') for a widget that needs a field the viewer may not see", () => {
    const restricted = { rows: [], error: null, restricted: "This widget needs fields you may not see: 'margin' is restricted for your role." };
    expect(widgetState(sampleWidget("revenue_kpi"), restricted)).toBe("restricted");
  });

  it("never waits for text, images, markdown or filters without data", () => {
    for (const id of ["title", "logo", "notes", "date"]) expect(widgetState(sampleWidget(id), undefined)).toBe("ready");
  });

  it("keeps a data-backed filter usable when it has no options, but reports its error", () => {
    const filter = sampleWidget("location_filter");
    expect(widgetState(filter, undefined)).toBe("skeleton");
    expect(widgetState(filter, none)).toBe("ready");
    expect(widgetState(filter, failed)).toBe("error");
  });
});
