/**
 * A stored file (a rendered report, an alert's picture) as the response that hands it over: its own type, a file
 * name reduced to letters, digits, dot, dash and underscore (nothing can break out of the header's quotes), and
 * never kept by a shared cache (the files are tenant data behind a signed link or a sign-in).
 */
export function storedFileResponse(file: { bytes: Uint8Array; contentType: string; filename: string }, disposition: "attachment" | "inline"): Response {
  return new Response(new Uint8Array(file.bytes), {
    headers: {
      "content-type": file.contentType,
      "content-disposition": `${disposition}; filename="${file.filename.replace(/[^\w.-]/g, "_")}"`,
      "cache-control": "private, no-store",
    },
  });
}
