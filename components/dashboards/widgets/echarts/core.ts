// What every chart kind needs: ECharts' core, the canvas renderer, and the components any chart's option may name
// (lib/manifest/echarts-option-allow-list.ts, COMMON_TOP and COMMON_SERIES). The chart kinds import this module, so it is
// fetched once, with the first chart on screen; the kinds add only their own series and components.
// `use` under another name: it is ECharts' module registry, not the React hook the linter takes it for.
import { use as register } from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import { AriaComponent, LegendComponent, MarkAreaComponent, MarkLineComponent, MarkPointComponent, TitleComponent, TooltipComponent } from "echarts/components";
import { LabelLayout } from "echarts/features";

register([CanvasRenderer, TitleComponent, LegendComponent, TooltipComponent, AriaComponent, MarkLineComponent, MarkPointComponent, MarkAreaComponent, LabelLayout]);

// echarts-for-react through its core entry: it draws with the ECharts passed to it (this module's registry), not all
// of ECharts. Fetched with the first chart, beside the modules of its kind.
export { default as ReactECharts } from "echarts-for-react/lib/core";
export { init, dispose, getInstanceByDom, type ECharts } from "echarts/core";
