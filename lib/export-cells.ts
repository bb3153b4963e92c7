/**
 * Spreadsheet export safety (CSV injection): a text cell starting with `=`,
 * `+`, `-`, `@`, tab or carriage return is read by Excel, LibreOffice and
 * Google Sheets as a formula, so it is written with a leading `'`, which makes
 * them show it as text. Numbers, including negative ones, stay numbers.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

export function neutralizeCell(value: unknown): unknown {
  if (typeof value !== "string") return value;
  if (!FORMULA_START.test(value) || PLAIN_NUMBER.test(value)) return value;
  return `'${value}`;
}

/** One CSV field: neutralised, then quoted when it holds a delimiter, quote or line break (RFC 4180). */
export function csvField(value: unknown): string {
  const safe = neutralizeCell(value);
  const text = safe === null || safe === undefined ? "" : String(safe);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A CSV document (CRLF lines, with a byte-order mark so Excel reads UTF-8) from rows of cell values. */
export function toCsv(rows: unknown[][]): string {
  return `\uFEFF${rows.map((row) => row.map(csvField).join(",")).join("\r\n")}\r\n`;
}

/**
 * An Excel workbook (exceljs, loaded on demand) with one sheet of neutralised cells; the first row is the header.
 * `numberFormats[i]` (Excel's numFmt, lib/dashboards/format.ts spreadsheetFormat) is column i's declared format:
 * its numbers, numeric strings included, go in as numbers shown in that format.
 */
export async function toXlsx(rows: unknown[][], sheetName: string, numberFormats: readonly (string | undefined)[] = []): Promise<ArrayBuffer> {
  const { default: ExcelJS } = await import("exceljs");
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet(sheetName.slice(0, 31).replace(/[\\/?*[\]:]/g, " ") || "Sheet1");
  rows.forEach((row, index) => {
    const added = sheet.addRow(row.map((value, column) => (index > 0 && numberFormats[column] !== undefined && typeof value === "string" && PLAIN_NUMBER.test(value) ? Number(value) : neutralizeCell(value ?? null))));
    if (index === 0) return;
    numberFormats.forEach((format, column) => {
      if (format !== undefined) added.getCell(column + 1).numFmt = format;
    });
  });
  if (rows.length > 0) sheet.getRow(1).font = { bold: true };
  return (await workbook.xlsx.writeBuffer()) as ArrayBuffer;
}
