import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { findUserForLogin } from "./directory";
import { normalizeEmail } from "./email";

/** Spellings of admin@acme.test that must all be one account. */
const ADMIN_SPELLINGS = [
  "admin@acme.test",
  "ADMIN@acme.test",
  "Admin@ACME.TEST",
  "admİn@acme.test", // U+0130 LATIN CAPITAL LETTER I WITH DOT ABOVE (issue 26)
  "admın@acme.test", // U+0131 LATIN SMALL LETTER DOTLESS I
  "ａｄｍｉｎ@acme.test", // full-width letters
  "ＡＤＭＩＮ＠ａｃｍｅ．ｔｅｓｔ", // full-width everything, the at sign and dot included
  "admi\u0307n@acme.test", // i + U+0307 COMBINING DOT ABOVE, what lower-casing İ gives
  "  admin@acme.test ",
];

describe("normalizeEmail", () => {
  it.each(ADMIN_SPELLINGS)("%j is admin@acme.test", (spelling) => {
    expect(normalizeEmail(spelling)).toBe("admin@acme.test");
  });

  it("folds case fully and keeps letters that are not case variants apart", () => {
    expect(normalizeEmail("STRASSE@x.test")).toBe(normalizeEmail("straße@x.test"));
    expect(normalizeEmail("ẞ@x.test")).toBe("ss@x.test");
    expect(normalizeEmail("ΟΔΟΣ@x.test")).toBe(normalizeEmail("οδος@x.test"));
    expect(normalizeEmail("ﬁle@x.test")).toBe("file@x.test");
    expect(normalizeEmail("josé@x.test")).toBe(normalizeEmail("JOSÉ@x.test"));
    expect(normalizeEmail("josé@x.test")).toBe(normalizeEmail("jose\u0301@x.test"));
    expect(normalizeEmail("josé@x.test")).not.toBe("jose@x.test");
  });

  it("is idempotent over every code point (in context)", () => {
    const failures: string[] = [];
    for (let cp = 0; cp < 0x30000; cp++) {
      if (cp >= 0xd800 && cp < 0xe000) continue;
      const c = String.fromCodePoint(cp);
      const once = normalizeEmail(`a${c}b${c}@x`);
      if (normalizeEmail(once) !== once) failures.push(cp.toString(16));
    }
    expect(failures).toEqual([]);
  });
});

describe("users.email_key: the same key in code and database", () => {
  it("the database's key for every printable ASCII character is normalizeEmail's", async () => {
    const { system } = await getDb();
    const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));
    const rows = await system.query<{ email: string; key: string }>(
      "SELECT e AS email, quarry_ascii_email_key(e) AS key FROM unnest($1::text[]) AS e",
      [[...ascii.map((c) => `a${c}B@x.test`), ` ${ascii.join("")} `, "MiXeD.Case+Tag@Example.COM"]],
    );
    for (const row of rows) expect(row.key, JSON.stringify(row.email)).toBe(normalizeEmail(row.email));
  });

  it("an ASCII address gets its key from the database, whatever key is written with it", async () => {
    const { system } = await getDb();
    await system.query(
      `INSERT INTO users (id, org_id, email, email_key, name, role, password_hash)
       VALUES ('usr_key_ascii', 'org_acme', ' New.User@Acme.Test', 'something-else', 'n', 'analyst', 'x')`,
    );
    const [row] = await system.query<{ email_key: string }>("SELECT email_key FROM users WHERE id = 'usr_key_ascii'");
    expect(row.email_key).toBe(normalizeEmail(" New.User@Acme.Test"));
    await system.query("UPDATE users SET email = 'Renamed@Acme.Test' WHERE id = 'usr_key_ascii'");
    const [renamed] = await system.query<{ email_key: string }>("SELECT email_key FROM users WHERE id = 'usr_key_ascii'");
    expect(renamed.email_key).toBe("renamed@acme.test");
  });

  it("a non-ASCII address must be written with its key; with it, every spelling finds the user", async () => {
    const { system } = await getDb();
    const insert = (key: string | null) =>
      system.query(
        `INSERT INTO users (id, org_id, email, email_key, name, role, password_hash)
         VALUES ('usr_key_unicode', 'org_acme', 'Jörg.İnce@acme.test', $1, 'n', 'analyst', 'x')`,
        [key],
      );
    await expect(insert(null)).rejects.toThrow(/email_key must be written/);
    await insert(normalizeEmail("Jörg.İnce@acme.test"));
    for (const spelling of ["jörg.ince@acme.test", "JÖRG.INCE@ACME.TEST", "jo\u0308rg.İnce@acme.test", "ｊöｒｇ.ｉｎｃｅ@acme.test"]) {
      expect((await findUserForLogin(spelling))?.id, spelling).toBe("usr_key_unicode");
    }
    // Changing the address without its key is refused too.
    await expect(system.query("UPDATE users SET email = 'Jörg@acme.test' WHERE id = 'usr_key_unicode'")).rejects.toThrow(/email_key must be written/);
    // Two accounts cannot share one key.
    await expect(
      system.query(
        `INSERT INTO users (id, org_id, email, email_key, name, role, password_hash)
         VALUES ('usr_key_twin', 'org_globex', 'JÖRG.İNCE@acme.test', $1, 'n', 'analyst', 'x')`,
        [normalizeEmail("JÖRG.İNCE@acme.test")],
      ),
    ).rejects.toThrow(/users_email_key_idx|duplicate key/);
  });

  it("every seeded user has the key normalizeEmail gives its address", async () => {
    const { system } = await getDb();
    const rows = await system.query<{ email: string; email_key: string | null }>("SELECT email, email_key FROM users");
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.email_key).toBe(normalizeEmail(row.email));
  });

  it.each(ADMIN_SPELLINGS)("sign-in look-up of %j finds acme's admin", async (spelling) => {
    expect((await findUserForLogin(spelling))?.id).toBe("usr_acme_admin");
  });

  it("an empty or blank address finds nobody", async () => {
    expect(await findUserForLogin("")).toBeNull();
    expect(await findUserForLogin("   ")).toBeNull();
  });
});
