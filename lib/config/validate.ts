import { loadAuditConfig } from "./audit";
import { loadChatConfig } from "./chat";
import { loadEmbeddingSettings } from "./embeddings";
import { loadExtractionLimits } from "./extraction";
import { loadIndexingSettings } from "./indexing";
import { loadNotificationsConfig } from "./notifications";
import { ConfigError, loadConfig } from "./schema";
import { loadDocumentStorageConfig } from "./storage";

const PREFIX = "Invalid configuration:\n";

/**
 * Every configuration variable of lib/config checked at once, without opening anything: what
 * scripts/server.mjs runs (through scripts/check-config.ts) before it listens, so an invalid value
 * stops the start instead of a server that answers 500. One line per problem, naming the variable
 * and the field; empty when the configuration is valid.
 */
export function configurationProblems(env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const check = (load: () => unknown) => {
    try {
      load();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      const text = error.message.startsWith(PREFIX) ? error.message.slice(PREFIX.length) : error.message;
      problems.push(...text.split("\n").map((line) => line.trim()).filter(Boolean));
    }
  };
  let dataDir = ".data";
  check(() => (dataDir = loadConfig(env).dataDir));
  check(() => loadDocumentStorageConfig(env, dataDir));
  check(() => loadExtractionLimits(env));
  check(() => loadIndexingSettings(env));
  check(() => loadEmbeddingSettings(env));
  check(() => loadChatConfig(env));
  check(() => loadNotificationsConfig(env));
  check(() => loadAuditConfig(env));
  return problems;
}

/** The message a start refused for its configuration prints (docs: README, "Configuration"). */
export function configurationMessage(problems: string[]): string {
  return `Quarry cannot start: invalid configuration (nothing was started)\n  ${problems.join("\n  ")}\nSee README.md, "Configuration (environment)", for each variable's expected value.`;
}
