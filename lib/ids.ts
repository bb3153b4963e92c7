import crypto from "node:crypto";

/**
 * The one way Quarry makes a record id: a prefix naming the table (`doc`, `dsh`, `emb`, `nrl`, …) and
 * 96 random bits in hex, e.g. `doc_3f2a…` (24 hex digits). Opaque to clients: nothing parses them.
 */
export const newId = (prefix: string) => `${prefix}_${crypto.randomBytes(12).toString("hex")}`;
