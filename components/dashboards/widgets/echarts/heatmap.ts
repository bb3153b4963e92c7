// A heatmap: its series on a grid, coloured by a visual map (TOP_LEVEL_KEYS.heatmap in lib/manifest/echarts-option-allow-list.ts).
// `use` under another name: it is ECharts' module registry, not the React hook the linter takes it for.
import { use as register } from "echarts/core";
import { HeatmapChart } from "echarts/charts";
import { GridComponent, VisualMapComponent } from "echarts/components";
import "./core";

register([HeatmapChart, GridComponent, VisualMapComponent]);
