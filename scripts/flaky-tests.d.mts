/** A JSON report as written by Playwright's or vitest's JSON reporter (only the fields read here). */
export type Report = Record<string, unknown> | null | undefined;

export function flakyPlaywrightTests(report: Report): string[];
export function retriedVitestTests(report: Report, root?: string): string[];
export function retriedTestLines(reports: [step: string, report: Report][], root?: string): string[];
