import type { ValidationItem } from "@/lib/errors";

/** One problem in a manifest, with where it is: document (0 = the dashboard), path in it, and 1-based line/column. */
export interface ManifestError {
  document: number;
  path: (string | number)[];
  line: number;
  column: number;
  message: string;
}

export function formatPath(path: readonly (string | number)[]): string {
  return path.reduce<string>((out, seg) => (typeof seg === "number" ? `${out}[${seg}]` : out ? `${out}.${seg}` : seg), "");
}

/** `file:line:col path: message`, the form editors and the CLI understand. */
export function formatManifestError(error: ManifestError, file = "manifest"): string {
  const where = formatPath(error.path);
  return `${file}:${error.line}:${error.column} ${where ? `${where}: ` : ""}${error.message}`;
}

/** Manifest errors as the API's 422 items, under the request field that held the YAML. */
export function manifestValidationItems(errors: readonly ManifestError[], field = "spec_yaml"): ValidationItem[] {
  return errors.map((e) => ({
    loc: ["body", field, ...(e.document > 0 ? [`document ${e.document}`] : []), ...e.path],
    msg: `${e.line}:${e.column} ${e.message}`,
    type: "manifest",
    line: e.line,
    column: e.column,
  }));
}

/** The inverse of manifestValidationItems: 422 items of a manifest back to positioned errors (for the editor and error boxes). */
export function manifestErrorsFromItems(items: readonly ValidationItem[], field = "spec_yaml"): ManifestError[] {
  return items.map((item) => {
    const rest = item.loc.slice(item.loc.indexOf(field) + 1);
    const doc = typeof rest[0] === "string" ? /^document (\d+)$/.exec(rest[0]) : null;
    return {
      document: doc ? Number(doc[1]) : 0,
      path: doc ? rest.slice(1) : rest,
      line: item.line ?? 1,
      column: item.column ?? 1,
      message: item.msg.replace(/^\d+:\d+ /, ""),
    };
  });
}
