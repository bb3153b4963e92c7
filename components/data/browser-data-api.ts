import { callApi, endpointUrl } from "@/components/api-client";
import { sendWithProgress } from "@/components/upload-with-progress";
import { createUpload, dropDataTable, listDataTables, loadDataTable, previewUpload, UploadPreview } from "@/lib/data/contract";
import type { DataApi } from "./data-api";

/** The /data page's API calls, through the tables contract (lib/data/contract.ts). */
export const browserDataApi: DataApi = {
  upload: (file, options, onProgress) =>
    sendWithProgress(endpointUrl(createUpload, { query: { filename: file.name, ...options } }), file, UploadPreview, onProgress, { contentType: "application/octet-stream" }),
  preview: (uploadId, options) => callApi(previewUpload, { params: { id: uploadId }, query: options }),
  load: (body) => callApi(loadDataTable, { body }),
  list: async () => (await callApi(listDataTables, {})).items,
  drop: async (name, force) => {
    await callApi(dropDataTable, { params: { name }, query: { force: force ? "true" : "false" } });
  },
};
