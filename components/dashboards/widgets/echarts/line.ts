// A line chart: its series on the cartesian components.
// `use` under another name: it is ECharts' module registry, not the React hook the linter takes it for.
import { use as register } from "echarts/core";
import { LineChart } from "echarts/charts";
import "./cartesian";

register([LineChart]);
