import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gaxios } from "google-auth-library";
import { importSPKI, jwtVerify } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_EMBEDDING_SETTINGS, type EmbeddingSettings } from "@/lib/config/embeddings";
import { EmbeddingProviders, type EmbeddingProviderOptions } from "./index";
import { FAST_BACKOFF, fakeVector, rejection, sendJson, startLoopback, type LoopbackHandler, type LoopbackServer } from "@/test/support/embedding-server";

const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";
const CLIENT_EMAIL = "quarry-embeddings@test-project.iam.gserviceaccount.com";
const ACCESS_TOKEN = "ya29.loopback-access-token";

const { publicKey, privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-vertex-"));
const keyFile = path.join(dir, "service-account.json");

let server: LoopbackServer;
let respond: LoopbackHandler;
let tokenExchanges = 0;
let tokenRefusal: string | null = null;

interface PredictBody {
  instances: { content: string; task_type: string }[];
  parameters?: { autoTruncate?: boolean };
}

/** Vertex's predict endpoint, checking path, bearer token and body shape. */
const vertexLike: LoopbackHandler = (request, response) => {
  const expectedPath = "/v1/projects/test-project/locations/europe-west4/publishers/google/models/text-embedding-005:predict";
  if (request.method !== "POST" || request.path !== expectedPath) return sendJson(response, 404, { error: { code: 404, message: `unexpected ${request.path}` } });
  if (request.headers.authorization !== `Bearer ${ACCESS_TOKEN}`) return sendJson(response, 401, { error: { code: 401, message: "Request had invalid authentication credentials." } });
  const body = JSON.parse(request.body) as PredictBody;
  const shapeOk = Array.isArray(body.instances) && body.instances.every((i) => typeof i.content === "string" && ["RETRIEVAL_DOCUMENT", "RETRIEVAL_QUERY"].includes(i.task_type));
  if (!shapeOk) return sendJson(response, 400, { error: { code: 400, message: "Invalid instances" } });
  sendJson(response, 200, {
    predictions: body.instances.map((i) => ({ embeddings: { values: fakeVector(Number(i.content.replace(/\D/g, "")) || 0, 768), statistics: { token_count: 2, truncated: false } } })),
  });
};

beforeAll(async () => {
  server = await startLoopback(async (request, response) => {
    if (request.path === "/token") {
      // The real JWT-bearer exchange: verify the assertion google-auth-library signed with the service account's key.
      tokenExchanges += 1;
      const form = new URLSearchParams(request.body);
      if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") return sendJson(response, 400, { error: "unsupported_grant_type" });
      if (tokenRefusal) return sendJson(response, 400, { error: "invalid_grant", error_description: tokenRefusal });
      const key = await importSPKI(publicKey.export({ type: "spki", format: "pem" }).toString(), "RS256");
      const { payload } = await jwtVerify(form.get("assertion") ?? "", key, { issuer: CLIENT_EMAIL, audience: GOOGLE_TOKEN_URL });
      if (payload.scope !== "https://www.googleapis.com/auth/cloud-platform") return sendJson(response, 400, { error: "invalid_scope" });
      return sendJson(response, 200, { access_token: ACCESS_TOKEN, expires_in: 3600, token_type: "Bearer" });
    }
    return respond(request, response);
  });
  fs.writeFileSync(
    keyFile,
    JSON.stringify({
      type: "service_account",
      project_id: "test-project",
      private_key_id: "k1",
      private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      client_email: CLIENT_EMAIL,
      client_id: "1",
      token_uri: `${server.url}/token`,
    }),
  );
});

afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  tokenExchanges = 0;
  tokenRefusal = null;
});

function settings(extra: Partial<EmbeddingSettings> = {}): EmbeddingSettings {
  return {
    ...LOCAL_EMBEDDING_SETTINGS,
    default_provider: "vertex",
    vertex: { project: "test-project", location: "europe-west4", credentials_file: keyFile, api_endpoint: server.url },
    ...extra,
  };
}

/**
 * google-auth-library posts the JWT assertion to Google's fixed token URL (it ignores the key file's
 * token_uri); this transport sends that one request to the loopback server instead. Signing, the
 * form body and the token caching are the library's own.
 */
function loopbackAuth(): EmbeddingProviderOptions {
  const transporter = new gaxios.Gaxios();
  transporter.interceptors.request.add({
    resolved: async (options) => {
      if (String(options.url) === GOOGLE_TOKEN_URL) options.url = new URL(`${server.url}/token`);
      return options;
    },
  });
  return { ...FAST_BACKOFF, vertexAuth: { clientOptions: { transporter } } };
}

describe("Vertex AI embeddings over REST with google-auth-library", () => {
  it("exchanges a service-account JWT for a token once and posts instances with task types", async () => {
    respond = vertexLike;
    const embedder = new EmbeddingProviders(settings(), loopbackAuth()).embedder(null);
    expect([embedder.provider, embedder.model, embedder.dims]).toEqual(["vertex", "text-embedding-005", 768]);

    expect(await embedder.embedDocuments(["t1", "t2"])).toEqual([fakeVector(1, 768), fakeVector(2, 768)]);
    expect(await embedder.embedQuery("t3")).toEqual(fakeVector(3, 768));
    expect(tokenExchanges).toBe(1);

    const predicts = server.requests.filter((r) => r.path.endsWith(":predict")).slice(-2);
    expect(JSON.parse(predicts[0].body)).toEqual({
      instances: [
        { content: "t1", task_type: "RETRIEVAL_DOCUMENT" },
        { content: "t2", task_type: "RETRIEVAL_DOCUMENT" },
      ],
      parameters: { autoTruncate: true },
    });
    expect((JSON.parse(predicts[1].body) as PredictBody).instances).toEqual([{ content: "t3", task_type: "RETRIEVAL_QUERY" }]);
  });

  it("sends at most 250 instances and about 20,000 tokens per request", async () => {
    respond = vertexLike;
    const embedder = new EmbeddingProviders(settings(), loopbackAuth()).embedder("text-embedding-005");
    const before = server.requests.length;
    const progress: number[] = [];
    await embedder.embedDocuments(
      Array.from({ length: 260 }, (_, i) => `t${i}`),
      { onProgress: (done) => progress.push(done) },
    );
    // 3,000-byte texts are estimated at 1,001 tokens: 19 fit in 20,000.
    await embedder.embedDocuments(Array.from({ length: 30 }, (_, i) => `t${i} ${"w".repeat(3000 - 4)}`));
    const sizes = server.requests.slice(before).filter((r) => r.path.endsWith(":predict")).map((r) => (JSON.parse(r.body) as PredictBody).instances.length);
    expect(sizes).toEqual([250, 10, 19, 11]);
    expect(progress).toEqual([250, 260]);
  });

  it("honours Retry-After on a 429 and then succeeds", async () => {
    let calls = 0;
    respond = (request, response) => {
      calls += 1;
      if (calls === 1) return sendJson(response, 429, { error: { code: 429, message: "Quota exceeded", status: "RESOURCE_EXHAUSTED" } }, { "retry-after": "1" });
      return vertexLike(request, response);
    };
    const embedder = new EmbeddingProviders(settings(), loopbackAuth()).embedder(null);
    const started = Date.now();
    expect(await embedder.embedQuery("t7")).toEqual(fakeVector(7, 768));
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(calls).toBe(2);
  });

  it("ends repeated 503s in a 502 carrying Vertex's message", async () => {
    let calls = 0;
    respond = (_request, response) => {
      calls += 1;
      sendJson(response, 503, { error: { code: 503, message: "The service is currently unavailable.", status: "UNAVAILABLE" } });
    };
    const embedder = new EmbeddingProviders(settings({ max_retries: 2 }), loopbackAuth()).embedder(null);
    const error = await rejection(embedder.embedDocuments(["t1"]));
    expect([error.status, error.detail]).toEqual([502, "embedding provider vertex failed: 503 The service is currently unavailable."]);
    expect(calls).toBe(3);
  });

  it("answers 504 when predict hangs", async () => {
    respond = () => undefined;
    const embedder = new EmbeddingProviders(settings({ max_retries: 0, request_timeout_ms: 300 }), loopbackAuth()).embedder(null);
    const error = await rejection(embedder.embedQuery("t1"));
    expect([error.status, error.detail]).toEqual([504, "embedding provider vertex timed out after 300 ms (1 attempts)"]);
  });

  it("fails at once, as a credentials problem, when the token endpoint refuses the service account", async () => {
    respond = vertexLike;
    tokenRefusal = "Invalid JWT Signature.";
    const embedder = new EmbeddingProviders(settings(), loopbackAuth()).embedder(null);
    const error = await rejection(embedder.embedQuery("t1"));
    expect([error.status, error.detail]).toEqual([502, "embedding provider vertex failed: 400 credentials: Invalid JWT Signature."]);
    expect(tokenExchanges).toBeGreaterThanOrEqual(1);
    expect(String(error.detail)).not.toContain("PRIVATE KEY");
  });

  it("without a key file uses Application Default Credentials: the workload-identity metadata server's token", async () => {
    let metadataTokens = 0;
    respond = (request, response) => {
      if (request.path.startsWith("/computeMetadata/v1/")) {
        if (request.headers["metadata-flavor"] !== "Google") return sendJson(response, 403, { error: "missing Metadata-Flavor" });
        if (request.path.startsWith("/computeMetadata/v1/instance/service-accounts/default/token")) {
          metadataTokens += 1;
          return sendJson(response, 200, { access_token: ACCESS_TOKEN, expires_in: 3600, token_type: "Bearer" }, { "metadata-flavor": "Google" });
        }
        return sendJson(response, 200, {}, { "metadata-flavor": "Google" });
      }
      return vertexLike(request, response);
    };
    const saved = { host: process.env.GCE_METADATA_HOST, detection: process.env.METADATA_SERVER_DETECTION, adc: process.env.GOOGLE_APPLICATION_CREDENTIALS };
    process.env.GCE_METADATA_HOST = server.host;
    process.env.METADATA_SERVER_DETECTION = "assume-present";
    delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
    try {
      const adc = settings({ vertex: { project: "test-project", location: "europe-west4", api_endpoint: server.url } });
      const embedder = new EmbeddingProviders(adc, FAST_BACKOFF).embedder(null);
      expect(await embedder.embedQuery("t8")).toEqual(fakeVector(8, 768));
      expect(metadataTokens).toBe(1);
      expect(tokenExchanges).toBe(0);
    } finally {
      for (const [name, value] of [["GCE_METADATA_HOST", saved.host], ["METADATA_SERVER_DETECTION", saved.detection], ["GOOGLE_APPLICATION_CREDENTIALS", saved.adc]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("reports a missing key file as not configured", () => {
    const providers = new EmbeddingProviders(settings({ vertex: { project: "test-project", location: "us-central1", credentials_file: path.join(dir, "missing.json") } }));
    expect(providers.status()).toMatchObject({ provider: "vertex", configured: false, reason: "vertex.credentials_file does not exist" });
    expect(() => providers.embedder(null)).toThrow("embedding provider is not configured: vertex.credentials_file does not exist");
  });
});

describe("Vertex AI with an API key (SPEC §2.9 vertex.api_key)", () => {
  const API_KEY = "AIzaSy-loopback-key-0123456789";
  const apiKeyed = (expectedPath: string): LoopbackHandler => (request, response) => {
    if (request.path !== expectedPath) return sendJson(response, 404, { error: { code: 404, message: `unexpected ${request.path}` } });
    if (request.headers["x-goog-api-key"] !== API_KEY) {
      return sendJson(response, 403, { error: { code: 403, message: `API key not valid: ${String(request.headers["x-goog-api-key"])}`, status: "PERMISSION_DENIED" } });
    }
    if (request.headers.authorization !== undefined) return sendJson(response, 400, { error: { code: 400, message: "both an API key and OAuth credentials" } });
    const body = JSON.parse(request.body) as PredictBody;
    sendJson(response, 200, { predictions: body.instances.map((i) => ({ embeddings: { values: fakeVector(Number(i.content.replace(/\D/g, "")) || 0, 768) } })) });
  };

  it("without a project calls express mode's global :predict (no project, no location) with x-goog-api-key, and no OAuth exchange", async () => {
    respond = apiKeyed("/v1/publishers/google/models/text-embedding-005:predict");
    const keyed = settings({ vertex: { api_key: API_KEY, location: "us-central1", api_endpoint: server.url } });
    const providers = new EmbeddingProviders(keyed, FAST_BACKOFF);
    expect(providers.status()).toMatchObject({ provider: "vertex", configured: true, reason: null });
    const embedder = providers.embedder(null);
    expect(await embedder.embedDocuments(["t4", "t5"])).toEqual([fakeVector(4, 768), fakeVector(5, 768)]);
    expect(await embedder.embedQuery("t6")).toEqual(fakeVector(6, 768));
    const last = server.requests.at(-1)!;
    expect(last.path).not.toContain("key=");
    expect(JSON.parse(last.body)).toEqual({ instances: [{ content: "t6", task_type: "RETRIEVAL_QUERY" }], parameters: { autoTruncate: true } });
    expect(tokenExchanges).toBe(0);
  });

  it("with a project calls the project's regional :predict with the key", async () => {
    respond = apiKeyed("/v1/projects/test-project/locations/europe-west4/publishers/google/models/text-embedding-005:predict");
    const keyed = settings({ vertex: { api_key: API_KEY, project: "test-project", location: "europe-west4", api_endpoint: server.url } });
    expect(await new EmbeddingProviders(keyed, FAST_BACKOFF).embedder(null).embedQuery("t9")).toEqual(fakeVector(9, 768));
    expect(tokenExchanges).toBe(0);
  });

  it("keeps a refused key out of the error", async () => {
    respond = apiKeyed("/v1/publishers/google/models/text-embedding-005:predict");
    const wrong = "AIzaSy-wrong-key-9876543210";
    const keyed = settings({ vertex: { api_key: wrong, location: "us-central1", api_endpoint: server.url } });
    const error = await rejection(new EmbeddingProviders(keyed, FAST_BACKOFF).embedder(null).embedQuery("t1"));
    expect(error.status).toBe(502);
    expect(error.detail).toBe("embedding provider vertex failed: 403 API key not valid: [redacted]");
  });
});
