// The components a cartesian chart's option may name (CARTESIAN_TOP in lib/manifest/echarts-option-allow-list.ts).
// `use` under another name: it is ECharts' module registry, not the React hook the linter takes it for.
import { use as register } from "echarts/core";
import { AxisPointerComponent, DataZoomComponent, GridComponent, VisualMapComponent } from "echarts/components";
import "./core";

register([GridComponent, AxisPointerComponent, DataZoomComponent, VisualMapComponent]);
