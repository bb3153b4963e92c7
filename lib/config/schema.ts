import path from "node:path";
import { z } from "zod";
import { parseTrustedProxies } from "@/lib/config/trusted-proxies";

/** A JSON string in an environment variable, parsed and validated with `schema`; errors name the variable and field. */
export function jsonEnv<T extends z.ZodType>(name: string, schema: T) {
  return z
    .string()
    .optional()
    .transform((raw, ctx): z.output<T> | undefined => {
      if (raw === undefined || raw.trim() === "") return undefined;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: `${name} is not valid JSON: ${(error as Error).message}` });
        return z.NEVER;
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          const field = issue.path.join(".") || "(root)";
          ctx.addIssue({ code: "custom", message: `${name}.${field}: ${issue.message}` });
        }
        return z.NEVER;
      }
      return parsed.data;
    });
}

const Env = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  /** 0: any free port (tests start servers so). */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  QUARRY_DATA_DIR: z.string().default(".data"),
  DATABASE_URL: z.string().url().optional(),
  /** Connections per process to DATABASE_URL (docs/deploy.md: pool size × processes ≤ max_connections). */
  QUARRY_DB_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(10),
  /**
   * Optional second login for user-written SQL (sql widgets, query datasets, rule evaluation): a role
   * that is only a member of quarry_reader, so a statement that resets its role cannot become the
   * application's own login (docs/deploy.md). Same database as DATABASE_URL.
   */
  QUARRY_READER_DATABASE_URL: z.string().url().optional(),
  /** User SQL statements running at once in one process on a server (the reader pool's size; embedded: one per analytics engine). */
  QUARRY_USER_SQL_CONCURRENCY: z.coerce.number().int().min(1).max(200).default(4),
  /**
   * Of those, at most this many for one organization even while the others sit idle; unset, every
   * one (an organization alone uses them all and yields them as others wait, lib/query/fair-queue.ts).
   */
  QUARRY_USER_SQL_PER_ORG: z.coerce.number().int().min(1).max(200).optional(),
  /** How long a request waits for a user-SQL slot before it answers 503 with Retry-After. */
  QUARRY_USER_SQL_QUEUE_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /**
   * Rows a rollup may hold per organization (docs/rollups.md, "Row cap"): a build reads at most one
   * more than this from its aggregate, and a rollup whose aggregate is larger is marked failed with the
   * reason (declare fewer or coarser dimensions) while the tables answer its widgets.
   */
  QUARRY_ROLLUP_MAX_ROWS: z.coerce.number().int().min(1).max(50_000_000).default(200_000),
  /** An organization's own tables (issue 42, docs/data.md "Limits"): rows and bytes over all of them, and how many. */
  QUARRY_DATA_MAX_ROWS: z.coerce.number().int().min(1).default(50_000_000),
  QUARRY_DATA_MAX_BYTES: z.coerce.number().int().min(1).default(10 * 1024 ** 3),
  QUARRY_DATA_MAX_TABLES: z.coerce.number().int().min(1).default(200),
  /** How long an upload waits for its load before the worker removes it (docs/data.md "Abandoned uploads"). */
  QUARRY_DATA_UPLOAD_TTL_HOURS: z.coerce.number().positive().max(24 * 365).default(24),
  QUARRY_SECRET: z.string().min(32, "QUARRY_SECRET must be at least 32 characters").optional(),
  QUARRY_PUBLIC_URL: z.string().url().optional(),
  QUARRY_STAGING_URL: z.string().url().optional(),
  QUARRY_SEED_DEMO: z.enum(["true", "false"]).default("true"),
  QUARRY_EMBEDDED_ANALYTICS: z.enum(["true", "false"]).default("true"),
  QUARRY_EMBEDDED_TSVECTOR_WORKER: z.enum(["true", "false"]).default("true"),
  /** Embedded analytics engine processes at most: one organization's long statements hold one, the others serve everyone else. */
  QUARRY_EMBEDDED_ANALYTICS_ENGINES: z.coerce.number().int().min(1).max(4).default(2),
  /** An analytics engine stops after this long without work, giving its memory back; the next reader request starts one again. */
  QUARRY_EMBEDDED_ANALYTICS_IDLE_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(300_000),
  AUTH_ISSUER: z.string().optional(),
  AUTH_JWKS_URL: z.string().url().optional(),
  AUTH_AUDIENCE: z.string().optional(),
  AUTH_CLAIM_ORG: z.string().default("org"),
  AUTH_CLAIM_ROLE: z.string().default("role"),
  AUTH_CLAIM_LOCATIONS: z.string().default("locations"),
  /** Where a bearer token names its member when its subject is the provider's own id (lib/auth/bearer.ts). */
  AUTH_CLAIM_EMAIL: z.string().default("email"),
  QUARRY_TRUSTED_PROXIES: z.string().optional().superRefine((raw, ctx) => {
    try {
      parseTrustedProxies(raw);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: (error as Error).message });
    }
  }),
  API_BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(1_048_576),
  /**
   * Every rate limit multiplied by this (per caller, shared, embed grants): load tests and benches
   * that play one analyst sending hundreds of requests a minute raise it instead of tripping 429s.
   * Requests are still counted, so what a request costs is unchanged.
   */
  QUARRY_RATE_LIMIT_MULTIPLIER: z.coerce.number().int().min(1).max(1_000_000).default(1),
  QUARRY_LOG_LEVEL: z.enum(["info", "warn", "error", "silent"]).default("info"),
});

export type Config = ReturnType<typeof loadConfig>;

/**
 * The user-SQL slots of one process (lib/query/fair-queue.ts). On a server, QUARRY_USER_SQL_CONCURRENCY;
 * each organization's login pool (lib/db/client.ts) has as many connections as the organization may
 * hold slots (at least two), so a slot granted never waits for a connection of its own pool. Embedded,
 * one per analytics engine: an engine answers one statement at a time, so more would only queue inside.
 */
function userSqlSlots(e: z.infer<typeof Env>): { total: number; perKey: number; deadlineMs: number } {
  const total = e.DATABASE_URL ? e.QUARRY_USER_SQL_CONCURRENCY : e.QUARRY_EMBEDDED_ANALYTICS === "true" ? e.QUARRY_EMBEDDED_ANALYTICS_ENGINES : 1;
  return { total, perKey: Math.min(e.QUARRY_USER_SQL_PER_ORG ?? total, total), deadlineMs: e.QUARRY_USER_SQL_QUEUE_MS };
}

/** Thrown at start when the environment is invalid; the message names each offending variable. */
export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined>) {
  // An empty variable means "not set", as in most shells' `VAR= command`.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = Env.safeParse(present);
  if (!parsed.success) {
    // A message that already names its variable ("QUARRY_SECRET must be …") is not prefixed twice.
    const lines = parsed.error.issues.map((i) => (i.message.startsWith(`${i.path.join(".")} `) || i.message.startsWith(`${i.path.join(".")}:`) ? i.message : `${i.path.join(".")}: ${i.message}`));
    throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.QUARRY_DATA_DIR);
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    dataDir,
    publicUrl: e.QUARRY_PUBLIC_URL ?? `http://localhost:${e.PORT}`,
    /** The staging deployment's address, listed as a second server in /openapi.json (SPEC §1: {staging_base_url}). */
    stagingUrl: e.QUARRY_STAGING_URL ?? null,
    database: e.DATABASE_URL
      ? ({ kind: "postgres", url: e.DATABASE_URL, readerUrl: e.QUARRY_READER_DATABASE_URL ?? null, poolSize: e.QUARRY_DB_POOL_SIZE } as const)
      : ({
          kind: "pglite",
          dir: path.join(dataDir, "pglite"),
          analyticsCopy: e.QUARRY_EMBEDDED_ANALYTICS === "true",
          analyticsEngines: e.QUARRY_EMBEDDED_ANALYTICS_ENGINES,
          analyticsIdleMs: e.QUARRY_EMBEDDED_ANALYTICS_IDLE_MS,
          tsvectorWorker: e.QUARRY_EMBEDDED_TSVECTOR_WORKER === "true",
        } as const),
    userSql: userSqlSlots(e),
    rollups: { maxRows: e.QUARRY_ROLLUP_MAX_ROWS },
    data: { maxRows: e.QUARRY_DATA_MAX_ROWS, maxBytes: e.QUARRY_DATA_MAX_BYTES, maxTables: e.QUARRY_DATA_MAX_TABLES, uploadTtlMs: e.QUARRY_DATA_UPLOAD_TTL_HOURS * 3_600_000 },
    seedDemo: e.QUARRY_SEED_DEMO === "true",
    secret: e.QUARRY_SECRET,
    auth: {
      // Without a JWKS URL the embedded local issuer (lib/auth/local-issuer.ts) signs and verifies tokens.
      issuer: e.AUTH_ISSUER ?? "quarry-local",
      jwksUrl: e.AUTH_JWKS_URL,
      audience: e.AUTH_AUDIENCE ?? "quarry-api",
      claims: { org: e.AUTH_CLAIM_ORG, role: e.AUTH_CLAIM_ROLE, locations: e.AUTH_CLAIM_LOCATIONS, email: e.AUTH_CLAIM_EMAIL },
    },
    api: { bodyLimitBytes: e.API_BODY_LIMIT_BYTES, trustedProxies: parseTrustedProxies(e.QUARRY_TRUSTED_PROXIES), rateLimitMultiplier: e.QUARRY_RATE_LIMIT_MULTIPLIER },
    logLevel: e.QUARRY_LOG_LEVEL,
  };
}
