/** Columns of the dashboard grid a widget's `layout.x` and `layout.w` count in: the viewer's, the editor's and the reports'. */
export const GRID_COLUMNS = 12;
