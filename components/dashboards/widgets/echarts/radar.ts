// A radar chart: its series and the radar coordinate system.
// `use` under another name: it is ECharts' module registry, not the React hook the linter takes it for.
import { use as register } from "echarts/core";
import { RadarChart } from "echarts/charts";
import { RadarComponent } from "echarts/components";
import "./core";

register([RadarChart, RadarComponent]);
