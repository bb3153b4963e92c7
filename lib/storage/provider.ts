import "server-only";
import { documentStorageConfig, type DocumentStorageConfig } from "@/lib/config/storage";
import { GcsObjectStorage } from "./gcs";
import { LocalObjectStorage } from "./local";
import type { ObjectStorage } from "./object-storage";
import { S3ObjectStorage } from "./s3";
import { processSingleton } from "@/lib/process-singleton";

/** The provider named by the configuration. */
export function createObjectStorage(cfg: DocumentStorageConfig): ObjectStorage {
  const { storage } = cfg;
  switch (storage.provider) {
    case "local":
      return new LocalObjectStorage(cfg.localDir, storage.prefix);
    case "s3":
      return new S3ObjectStorage(storage.bucket, storage.s3);
    case "gcs":
      return new GcsObjectStorage(storage.bucket, storage.gcs);
  }
}

/** The process-wide object storage, built from DOCUMENT_STORAGE_CONFIG on first use. */
export const objectStorageSingleton = processSingleton<ObjectStorage>("objectStorage", () => createObjectStorage(documentStorageConfig()));

export const objectStorage = (): ObjectStorage => objectStorageSingleton.get();
