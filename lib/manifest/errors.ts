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
