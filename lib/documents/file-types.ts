/** The document types Quarry accepts (SPEC §8: the indexable types). */
export const DOCUMENT_TYPES = {
  pdf: {
    label: "PDF",
    contentType: "application/pdf",
    // Content types a client may declare for this extension (browsers and OSes disagree).
    aliases: ["application/pdf", "application/x-pdf"],
  },
  docx: {
    label: "Word document",
    contentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    aliases: ["application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
  },
  txt: {
    label: "Plain text",
    contentType: "text/plain",
    aliases: ["text/plain"],
  },
  csv: {
    label: "CSV",
    contentType: "text/csv",
    // Windows reports .csv as Excel's type.
    aliases: ["text/csv", "application/csv", "text/comma-separated-values", "application/vnd.ms-excel", "text/plain"],
  },
} as const;

export type DocumentType = keyof typeof DOCUMENT_TYPES;
export const DOCUMENT_EXTENSIONS = Object.keys(DOCUMENT_TYPES) as DocumentType[];

/** Declared types that say nothing about the content; the extension and the bytes decide. */
const UNINFORMATIVE_TYPES = new Set(["", "application/octet-stream", "binary/octet-stream", "application/x-download"]);

/** Longest display name kept; longer names are shortened, keeping the extension. */
const MAX_FILENAME_LENGTH = 200;

/**
 * A file name for display and Content-Disposition only: the last path segment,
 * Unicode NFC, without control or reserved characters, at most 200 characters.
 * Returns "" when nothing usable is left. Storage keys never use it.
 */
export function sanitizeFilename(raw: string): string {
  const lastSegment = raw.split(/[/\\]/).pop() ?? "";
  let name = lastSegment
    .normalize("NFC")
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g, "")
    .replace(/[<>:"|?*]/g, "_")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^[.\s]+/, "")
    .replace(/[.\s]+$/, "");
  if (name.length > MAX_FILENAME_LENGTH) {
    const dot = name.lastIndexOf(".");
    const extension = dot > 0 && name.length - dot <= 10 ? name.slice(dot) : "";
    name = name.slice(0, MAX_FILENAME_LENGTH - extension.length).trimEnd() + extension;
  }
  return name;
}

/** The lower-case extension of a file name, without the dot ("" when none). */
export function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf(".");
  return dot > 0 ? filename.slice(dot + 1).toLowerCase() : "";
}

export function isDocumentType(extension: string): extension is DocumentType {
  return Object.hasOwn(DOCUMENT_TYPES, extension);
}

/** The media type without parameters, lower-case ("text/plain; charset=utf-8" → "text/plain"). */
function essence(contentType: string | null | undefined): string {
  return (contentType ?? "").split(";")[0].trim().toLowerCase();
}

/** Whether a declared content type fits the type (uninformative declarations always fit). */
export function declaredTypeFits(type: DocumentType, declared: string | null | undefined): boolean {
  const value = essence(declared);
  return UNINFORMATIVE_TYPES.has(value) || (DOCUMENT_TYPES[type].aliases as readonly string[]).includes(value);
}

export function allowedTypesText(): string {
  return DOCUMENT_EXTENSIONS.map((e) => `.${e}`).join(", ");
}
