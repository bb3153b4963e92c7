import type { Page } from "@playwright/test";

/** A file to drop on the documents page: its name, MIME type and bytes. */
export interface DroppedFile {
  name: string;
  type: string;
  data: Buffer;
}

/** Drops files on the drop zone the way a browser does: a drop event carrying a DataTransfer. */
export async function dropFiles(page: Page, files: DroppedFile[]) {
  const payload = files.map((f) => ({ name: f.name, type: f.type, base64: f.data.toString("base64") }));
  const dataTransfer = await page.evaluateHandle((items) => {
    const transfer = new DataTransfer();
    for (const item of items) {
      const bytes = Uint8Array.from(atob(item.base64), (c) => c.charCodeAt(0));
      transfer.items.add(new File([bytes], item.name, { type: item.type }));
    }
    return transfer;
  }, payload);
  const zone = page.getByTestId("document-dropzone");
  await zone.dispatchEvent("dragover", { dataTransfer });
  await zone.dispatchEvent("drop", { dataTransfer });
}
