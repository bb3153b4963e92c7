import "server-only";
import path from "node:path";
import { z } from "zod";
import { config } from "@/lib/config";
import { ConfigError, jsonEnv } from "./schema";
import { processSingleton } from "@/lib/process-singleton";

/** Key prefix inside the bucket: no leading slash, one trailing slash (or empty). */
const KeyPrefix = z
  .string()
  .default("documents/")
  .refine((p) => !p.split("/").some((segment) => segment === ".." || segment === "."), "must not contain '.' or '..' segments")
  .transform((p) => {
    const trimmed = p.replace(/^\/+/, "").replace(/\/+$/, "");
    return trimmed === "" ? "" : `${trimmed}/`;
  });

const LocalStorageSettings = z.object({
  provider: z.literal("local"),
  prefix: KeyPrefix,
  /** Folder for objects; default QUARRY_DATA_DIR/objects. */
  dir: z.string().min(1).optional(),
});

const S3StorageSettings = z.object({
  provider: z.literal("s3"),
  bucket: z.string().min(1),
  prefix: KeyPrefix,
  s3: z
    .object({
      // Without keys the SDK's default chain applies (IAM role, instance profile, web identity, env).
      access_key_id: z.string().min(1).optional(),
      secret_access_key: z.string().min(1).optional(),
      session_token: z.string().min(1).optional(),
      region: z.string().min(1).default("us-east-1"),
      /** S3-compatible servers (MinIO, Ceph, s3rver): path-style addressing is used with an endpoint. */
      endpoint_url: z.url().optional(),
    })
    .refine((s3) => (s3.access_key_id === undefined) === (s3.secret_access_key === undefined), {
      message: "access_key_id and secret_access_key must be given together (or neither, for the IAM role)",
    })
    .default({ region: "us-east-1" }),
});

const GcsStorageSettings = z.object({
  provider: z.literal("gcs"),
  bucket: z.string().min(1),
  prefix: KeyPrefix,
  gcs: z
    .object({
      use_workload_identity: z.boolean().default(false),
      /** Service-account key file, when workload identity is not used. */
      key_file: z.string().min(1).optional(),
      project_id: z.string().min(1).optional(),
    })
    .refine((gcs) => gcs.use_workload_identity || gcs.key_file !== undefined, {
      message: "set use_workload_identity to true or give key_file",
    }),
});

export const StorageSettings = z.discriminatedUnion("provider", [LocalStorageSettings, S3StorageSettings, GcsStorageSettings]);
export type StorageSettings = z.output<typeof StorageSettings>;
export type LocalStorageSettings = z.output<typeof LocalStorageSettings>;
export type S3StorageSettings = z.output<typeof S3StorageSettings>;
export type GcsStorageSettings = z.output<typeof GcsStorageSettings>;

/** 50 MiB: large manuals and scanned PDFs fit; bigger files are rarely useful for text search. */
export const DEFAULT_DOCUMENT_MAX_BYTES = 50 * 1024 * 1024;
/** Download URLs live 5 minutes: long enough to start a download, short enough that a leaked link dies. */
export const DEFAULT_DOWNLOAD_URL_TTL_SECONDS = 300;

const DocumentEnv = z.object({
  DOCUMENT_STORAGE_CONFIG: jsonEnv("DOCUMENT_STORAGE_CONFIG", StorageSettings),
  DOCUMENT_MAX_BYTES: z.coerce.number().int().positive().default(DEFAULT_DOCUMENT_MAX_BYTES),
  DOCUMENT_DOWNLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(10).max(7 * 24 * 3600).default(DEFAULT_DOWNLOAD_URL_TTL_SECONDS),
});

export interface DocumentStorageConfig {
  storage: StorageSettings;
  /** Folder of the local provider's objects (also used for its temporary files). */
  localDir: string;
  maxBytes: number;
  downloadUrlTtlSeconds: number;
}

/** Parses the document storage variables; throws ConfigError naming the variable and field. */
export function loadDocumentStorageConfig(env: Record<string, string | undefined>, dataDir: string): DocumentStorageConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = DocumentEnv.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => (i.code === "custom" ? i.message : `${i.path.join(".")}: ${i.message}`));
    throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const storage: StorageSettings = parsed.data.DOCUMENT_STORAGE_CONFIG ?? { provider: "local", prefix: "documents/" };
  const localDir = path.resolve(storage.provider === "local" && storage.dir ? storage.dir : path.join(dataDir, "objects"));
  return { storage, localDir, maxBytes: parsed.data.DOCUMENT_MAX_BYTES, downloadUrlTtlSeconds: parsed.data.DOCUMENT_DOWNLOAD_URL_TTL_SECONDS };
}

/** Document storage configuration, parsed once per process (a change needs a restart, SPEC §2.9). */
const documentStorageSingleton = processSingleton("documentStorageConfig", () => loadDocumentStorageConfig(process.env, config().dataDir));

export const documentStorageConfig = (): DocumentStorageConfig => documentStorageSingleton.get();
