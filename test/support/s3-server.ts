import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import S3rver from "s3rver";

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  /** s3rver accepts only these credentials for signed requests. */
  accessKeyId: string;
  secretAccessKey: string;
  close(): Promise<void>;
}

/** A real S3-compatible server (s3rver) on 127.0.0.1 at a free port, with one empty bucket, for tests. */
export async function startLocalS3(bucket = "quarry-test"): Promise<LocalS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    close: async () => {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
