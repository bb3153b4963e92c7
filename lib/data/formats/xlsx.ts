import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import ExcelJS from "exceljs";
import { Parse as parseZip } from "unzipper";
import { checkHeader, RowShaper } from "./limits";
import { renderValue } from "./render";
import { releasing, spool } from "./spool";
import { DataSourceError, dataSourceError, type OpenRowSourceOptions, type RowSource, type SourceLimits } from "./types";

/**
 * An XLSX is a zip of XML: its inflated size may be at most this many times the file's, plus
 * XLSX_SLACK_BYTES (spreadsheets measure 5-20×; a zip bomb is thousands). Checked while inflating,
 * before exceljs reads a byte of it.
 */
export const XLSX_MAX_EXPANSION = 100;
const XLSX_SLACK_BYTES = 16 * 1024 * 1024;
/** exceljs holds the shared-string table in memory: its XML may be this large at most. */
export const XLSX_MAX_SHARED_STRINGS_BYTES = 64 * 1024 * 1024;
/** workbook.xml (sheet names, a few KB) is read into memory to list the sheets. */
const MAX_WORKBOOK_XML_BYTES = 1024 * 1024;

/** Sheet names in the workbook's order, from a spooled file whose inflated size was checked. */
async function inspect(file: string, fileBytes: number): Promise<string[]> {
  const maxInflated = fileBytes * XLSX_MAX_EXPANSION + XLSX_SLACK_BYTES;
  let inflated = 0;
  let workbookXml: string | undefined;
  const zip = createReadStream(file).pipe(parseZip({ forceStream: true }));
  try {
    for await (const entry of zip) {
      const limit = entry.path === "xl/sharedStrings.xml" ? XLSX_MAX_SHARED_STRINGS_BYTES : entry.path === "xl/workbook.xml" ? MAX_WORKBOOK_XML_BYTES : Infinity;
      const kept: Buffer[] = [];
      let entryBytes = 0;
      for await (const chunk of entry as AsyncIterable<Buffer>) {
        inflated += chunk.length;
        entryBytes += chunk.length;
        if (inflated > maxInflated) {
          throw dataSourceError("expansion", `The XLSX inflates to more than ${XLSX_MAX_EXPANSION} times its size: refused as a zip bomb`);
        }
        if (entryBytes > limit) throw dataSourceError("expansion", `The XLSX's ${entry.path} inflates beyond ${limit} bytes`);
        if (entry.path === "xl/workbook.xml") kept.push(chunk);
      }
      if (entry.path === "xl/workbook.xml") workbookXml = Buffer.concat(kept).toString("utf8");
    }
  } catch (error) {
    if (error instanceof DataSourceError) throw error;
    throw dataSourceError("syntax", `The file is not a valid XLSX: ${(error as Error).message}`);
  } finally {
    zip.destroy();
  }
  if (workbookXml === undefined) throw dataSourceError("syntax", "The file is not an XLSX workbook (no xl/workbook.xml)");
  return [...workbookXml.matchAll(/<(?:\w+:)?sheet\b[^>]*?\bname="([^"]*)"/g)].map((match) => decodeXml(match[1]));
}

function decodeXml(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos|#x[0-9a-f]+|#[0-9]+);/gi, (_, name: string) => {
    const lower = name.toLowerCase();
    if (lower.startsWith("#x")) return String.fromCodePoint(parseInt(lower.slice(2), 16));
    if (lower.startsWith("#")) return String.fromCodePoint(parseInt(lower.slice(1), 10));
    return { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" }[lower]!;
  });
}

/** The sheets of an XLSX file, in the workbook's order. */
export async function listSheets(input: Readable, limits: Pick<SourceLimits, "maxBytes">): Promise<string[]> {
  const { file, bytes, release } = await spool(input, limits.maxBytes, "upload.xlsx");
  try {
    return await inspect(file, bytes);
  } finally {
    await release();
  }
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * A cell as text. Excel dates have no zone: a date-formatted cell is a date, or a wall time when it
 * has a time of day (loaded in the organization's zone). A formula is its cached result.
 */
function cellText(value: ExcelJS.CellValue, row: number): string | null {
  if (value instanceof Date) {
    const date = `${pad(value.getUTCFullYear(), 4)}-${pad(value.getUTCMonth() + 1)}-${pad(value.getUTCDate())}`;
    const millis = value.getUTCMilliseconds();
    if (value.getUTCHours() === 0 && value.getUTCMinutes() === 0 && value.getUTCSeconds() === 0 && millis === 0) return date;
    return `${date} ${pad(value.getUTCHours())}:${pad(value.getUTCMinutes())}:${pad(value.getUTCSeconds())}${millis ? `.${pad(millis, 3)}` : ""}`;
  }
  if (typeof value === "object" && value !== null) {
    if ("richText" in value) return value.richText.map((run) => run.text).join("") || null;
    if ("formula" in value || "sharedFormula" in value) return cellText((value as ExcelJS.CellFormulaValue).result as ExcelJS.CellValue, row);
    if ("error" in value) return value.error;
    if ("hyperlink" in value) return typeof value.text === "string" ? value.text || null : cellText(value.text as ExcelJS.CellValue, row);
  }
  return renderValue(value, row);
}

/** Values of a row by column (1-based in exceljs), refusing a cell beyond the column limit. */
function rowValues(row: ExcelJS.Row, dataRow: number, limits: SourceLimits): (string | null)[] {
  const values: (string | null)[] = [];
  row.eachCell({ includeEmpty: false }, (cell, column) => {
    if (column > limits.maxColumns) throw dataSourceError("max_columns", `a cell in column ${column}, beyond the limit of ${limits.maxColumns} columns`, dataRow || undefined);
    while (values.length < column - 1) values.push(null);
    values[column - 1] = cellText(cell.value, dataRow);
  });
  return values;
}

/**
 * One sheet of an XLSX (the first when none is named), streamed by exceljs's WorkbookReader after a
 * first pass over the spooled zip that bounds its inflated size. The sheet's first non-empty row is
 * the header.
 */
export async function openXlsx(input: Readable, options: OpenRowSourceOptions): Promise<RowSource> {
  const { limits } = options;
  const { file, bytes, release } = await spool(input, limits.maxBytes, "upload.xlsx");
  let sheetRows: AsyncIterator<ExcelJS.Row>;
  let header: string[];
  let workbook: AsyncGenerator<ExcelJS.stream.xlsx.WorksheetReader>;
  let stream: ReturnType<typeof createReadStream> | undefined;
  try {
    const sheets = await inspect(file, bytes);
    const sheet = options.sheet ?? sheets[0];
    if (sheet === undefined || !sheets.includes(sheet)) {
      throw dataSourceError("unknown_sheet", `The workbook has no sheet ${JSON.stringify(options.sheet ?? "")}; its sheets: ${sheets.map((name) => JSON.stringify(name)).join(", ")}`);
    }
    stream = createReadStream(file);
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(stream, { worksheets: "emit", sharedStrings: "cache", styles: "cache", hyperlinks: "ignore", entries: "ignore" });
    workbook = reader[Symbol.asyncIterator]();
    let worksheet: ExcelJS.stream.xlsx.WorksheetReader | undefined;
    for (let next = await workbook.next(); !next.done; next = await workbook.next()) {
      if ((next.value as { name?: string }).name === sheet) {
        worksheet = next.value;
        break;
      }
    }
    if (!worksheet) throw dataSourceError("unknown_sheet", `The sheet ${JSON.stringify(sheet)} has no cells`);
    sheetRows = worksheet[Symbol.asyncIterator]();
    const first = await sheetRows.next();
    if (first.done) throw dataSourceError("no_header", `The sheet ${JSON.stringify(sheet)} is empty: it has no header row`);
    header = rowValues(first.value, 0, limits).map((name) => name ?? "");
    checkHeader(header, limits);
  } catch (error) {
    stream?.destroy();
    await release();
    throw error;
  }
  const shaper = new RowShaper(header, limits);

  async function* rows(): AsyncGenerator<(string | null)[]> {
    try {
      for (let next = await sheetRows.next(); !next.done; next = await sheetRows.next()) {
        const values = rowValues(next.value, shaper.rows + 1, limits);
        if (values.every((value) => value === null)) continue;
        yield shaper.shape(values);
      }
    } finally {
      stream?.destroy();
      await workbook.return(undefined);
      await release();
    }
  }
  return { header, rows: releasing(rows(), release) };
}
