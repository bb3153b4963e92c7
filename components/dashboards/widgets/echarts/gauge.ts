// A gauge: its series alone.
// `use` under another name: it is ECharts' module registry, not the React hook the linter takes it for.
import { use as register } from "echarts/core";
import { GaugeChart } from "echarts/charts";
import "./core";

register([GaugeChart]);
