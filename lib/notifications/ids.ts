import crypto from "node:crypto";

/** A prefixed random id, e.g. `nrl_3f2a...` (prefix says the table). */
export const newId = (prefix: string) => `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
