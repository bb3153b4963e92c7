/**
 * Lexical checks on SQL written in manifests. They are about well-formedness, not
 * security, and run in the browser's editor too: what SQL may do is decided on
 * PostgreSQL's own parser with an allow-list (sql-allow-list.ts, on the server), and
 * user SQL runs on a login confined to the reader role under row-level security
 * (execute.ts, lib/db/reader-login.ts). These checks catch what would otherwise break
 * the statement we build around them (a stray `;`, an unterminated comment swallowing
 * our suffix, a `$1` colliding with our bind parameters) and give the author a precise
 * message.
 */

export type SqlToken =
  | { kind: "word"; text: string; at: number }
  | { kind: "quoted"; text: string; at: number }
  | { kind: "string"; at: number }
  | { kind: "number"; at: number }
  | { kind: "param"; text: string; at: number }
  | { kind: "comment"; at: number }
  | { kind: "punct"; text: string; at: number };

export class SqlTextError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = "SqlTextError";
  }
}

/**
 * PostgreSQL's scanner (scan.l) reads only these six as whitespace; every other character
 * (U+00A0 and the other Unicode spaces included, as every byte >= 0x80) belongs to an
 * identifier. JavaScript's `\s` would split a name PostgreSQL reads as one.
 */
const SPACE = /[ \t\n\r\f\v]/;

/** The tokens of `sql` as PostgreSQL's scanner splits them (also read by the editor's name check, lib/manifest-check/table-names.ts). */
export function lex(sql: string): SqlToken[] {
  const tokens: SqlToken[] = [];
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    const start = i;
    if (SPACE.test(ch)) {
      i++;
    } else if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end;
      tokens.push({ kind: "comment", at: start });
    } else if (sql.startsWith("/*", i)) {
      // PostgreSQL block comments nest.
      let depth = 0;
      do {
        if (sql.startsWith("/*", i)) {
          depth++;
          i += 2;
        } else if (sql.startsWith("*/", i)) {
          depth--;
          i += 2;
        } else if (i >= sql.length) {
          throw new SqlTextError("unterminated /* comment", start);
        } else i++;
      } while (depth > 0);
      tokens.push({ kind: "comment", at: start });
    } else if (ch === "'" || ((ch === "E" || ch === "e") && sql[i + 1] === "'")) {
      const escapes = ch !== "'";
      i += escapes ? 2 : 1;
      for (;;) {
        if (i >= sql.length) throw new SqlTextError("unterminated string literal", start);
        if (escapes && sql[i] === "\\") i += 2;
        else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
        else if (sql[i] === "'") break;
        else i++;
      }
      i++;
      tokens.push({ kind: "string", at: start });
    } else if ((ch === "U" || ch === "u") && sql[i + 1] === "&" && (sql[i + 2] === '"' || sql[i + 2] === "'")) {
      // U&"d\0061ta" / U&'d\0061ta' (Unicode escapes), optionally followed by UESCAPE 'c'.
      const quote = sql[i + 2];
      const body = readQuoted(sql, i + 2, quote, start);
      i = body.end;
      const uescape = /^([ \t\n\r\f\v]*UESCAPE[ \t\n\r\f\v]*)'([^'])'/i.exec(sql.slice(i, i + 64));
      let escape = "\\";
      // PostgreSQL takes one ASCII byte that is no hex digit, sign, quote or space.
      if (uescape) {
        escape = uescape[2];
        if (/[0-9a-fA-F+'"\u0080-\uffff]/.test(escape) || SPACE.test(escape)) throw new SqlTextError(`invalid UESCAPE character '${escape}'`, i);
        i += uescape[0].length;
      }
      if (quote === '"') tokens.push({ kind: "quoted", text: decodeUnicodeEscapes(body.text, escape, start), at: start });
      else tokens.push({ kind: "string", at: start });
    } else if (ch === '"') {
      const body = readQuoted(sql, i, '"', start);
      tokens.push({ kind: "quoted", text: body.text, at: start });
      i = body.end;
    } else if (ch === "$") {
      const tag = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(sql.slice(i, i + 70));
      const param = /^\$[0-9]+/.exec(sql.slice(i, i + 12));
      if (tag) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        if (end === -1) throw new SqlTextError(`unterminated ${tag[0]} quoted string`, start);
        i = end + tag[0].length;
        tokens.push({ kind: "string", at: start });
      } else if (param) {
        i += param[0].length;
        tokens.push({ kind: "param", text: param[0], at: start });
      } else {
        i++;
        tokens.push({ kind: "punct", text: "$", at: start });
      }
    } else if (/[A-Za-z_\u0080-\uffff]/.test(ch)) {
      while (i < sql.length && /[A-Za-z0-9_$\u0080-\uffff]/.test(sql[i])) i++;
      tokens.push({ kind: "word", text: sql.slice(start, i), at: start });
    } else if (/[0-9]/.test(ch) || (ch === "." && /[0-9]/.test(sql[i + 1] ?? ""))) {
      while (i < sql.length && /[0-9.eE]/.test(sql[i])) i++;
      tokens.push({ kind: "number", at: start });
    } else if (sql.startsWith("::", i)) {
      i += 2;
      tokens.push({ kind: "punct", text: "::", at: start });
    } else {
      i++;
      tokens.push({ kind: "punct", text: ch, at: start });
    }
  }
  return tokens;
}

/** The text between `quote` at `open` and its closing quote (a doubled quote stands for one), and the index after it. */
function readQuoted(sql: string, open: number, quote: string, tokenStart: number): { text: string; end: number } {
  let text = "";
  for (let i = open + 1; ; ) {
    const close = sql.indexOf(quote, i);
    if (close === -1) throw new SqlTextError(quote === '"' ? 'unterminated "quoted identifier"' : "unterminated string literal", tokenStart);
    text += sql.slice(i, close);
    if (sql[close + 1] !== quote) return { text, end: close + 1 };
    text += quote;
    i = close + 2;
  }
}

/**
 * The name a U& identifier stands for, as PostgreSQL reads it: `<e>XXXX` (4 hex digits),
 * `<e>+XXXXXX` (6 hex digits) and `<e><e>`, where `<e>` is the escape character.
 * Column-name checks (unqualifiedColumns) run on this decoded name.
 */
function decodeUnicodeEscapes(text: string, escape: string, at: number): string {
  let out = "";
  for (let i = 0; i < text.length; ) {
    if (text[i] !== escape) {
      out += text[i++];
      continue;
    }
    if (text[i + 1] === escape) {
      out += escape;
      i += 2;
      continue;
    }
    const long = text[i + 1] === "+";
    const digits = long ? text.slice(i + 2, i + 8) : text.slice(i + 1, i + 5);
    if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== (long ? 6 : 4)) throw new SqlTextError("invalid Unicode escape in a U& identifier", at);
    const code = Number.parseInt(digits, 16);
    if (code > 0x10ffff) throw new SqlTextError("invalid Unicode escape value in a U& identifier", at);
    out += String.fromCharCode(...(code > 0xffff ? [0xd800 + ((code - 0x10000) >> 10), 0xdc00 + ((code - 0x10000) & 0x3ff)] : [code]));
    i += long ? 8 : 5;
  }
  // A surrogate pair may be written as two escapes, as PostgreSQL allows; a lone half is an error.
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(out)) throw new SqlTextError("invalid Unicode surrogate pair in a U& identifier", at);
  return out;
}

function checkParentheses(tokens: SqlToken[]): void {
  let depth = 0;
  for (const t of tokens) {
    if (t.kind !== "punct") continue;
    if (t.text === "(") depth++;
    if (t.text === ")" && --depth < 0) throw new SqlTextError("unbalanced ')'", t.at);
  }
  if (depth > 0) throw new SqlTextError("unclosed '('", tokens.findLast((t) => t.kind === "punct" && t.text === "(")?.at ?? 0);
}

/**
 * Checks a fragment spliced into a generated statement (a dimension column, a `sql`
 * metric, a `from` source). Throws SqlTextError.
 */
export function checkSqlFragment(fragment: string): void {
  const tokens = lex(fragment);
  for (const t of tokens) {
    if (t.kind === "comment") throw new SqlTextError("comments are not allowed in an expression", t.at);
    if (t.kind === "param") throw new SqlTextError(`bind parameters such as ${t.text} are not allowed here; filters supply the values`, t.at);
    if (t.kind === "punct" && t.text === ";") throw new SqlTextError("';' is not allowed in an expression", t.at);
  }
  checkParentheses(tokens);
}

/**
 * Checks a whole user query (an `sql` widget, a `query` dataset, a catalog KPI) and returns
 * it without a trailing semicolon. One read statement only: SELECT, WITH, VALUES or TABLE.
 */
export function checkSqlQuery(query: string): string {
  const tokens = lex(query);
  const meaningful = tokens.filter((t) => t.kind !== "comment");
  let end = meaningful.length;
  while (end > 0 && meaningful[end - 1].kind === "punct" && (meaningful[end - 1] as { text: string }).text === ";") end--;
  const body = meaningful.slice(0, end);
  if (body.length === 0) throw new SqlTextError("the query is empty", 0);
  for (const t of body) {
    if (t.kind === "punct" && t.text === ";") throw new SqlTextError("only one statement is allowed; remove the ';' and what follows", t.at);
    if (t.kind === "param") throw new SqlTextError(`bind parameters such as ${t.text} are not allowed; use filters`, t.at);
  }
  const first = body[0];
  const verb = first.kind === "word" ? first.text.toLowerCase() : first.kind === "punct" ? first.text : "";
  if (!["select", "with", "values", "table", "("].includes(verb)) {
    throw new SqlTextError(`only read queries are allowed (SELECT or WITH), not ${first.kind === "word" ? first.text.toUpperCase() : "this"}`, first.at);
  }
  checkParentheses(body);
  // Cut at the end of the last token we kept, so trailing semicolons and comments go away.
  const last = body[body.length - 1];
  const cut = tokens.indexOf(last) + 1 < tokens.length ? tokens[tokens.indexOf(last) + 1].at : query.length;
  // Trim only what PostgreSQL reads as space: a trailing U+00A0 is part of the last name.
  return query.slice(0, cut).replace(/[ \t\n\r\f\v]+$/, "");
}

const EXPRESSION_WORDS = new Set(
  (
    "and or not null true false is in between like ilike similar to case when then else end as distinct cast interval " +
    "date time timestamp timestamptz with without zone at from extract filter where over partition by order asc desc " +
    "nulls first last rows range groups preceding following unbounded current row any all some exists array epoch " +
    "millennium century decade year quarter month week day hour minute second milliseconds microseconds dow isodow doy " +
    "numeric decimal integer int smallint bigint text varchar char real double precision float boolean bool collate escape"
  ).split(" "),
);

/**
 * The bare column names in an expression: words that are not keywords, functions,
 * types, qualifiers or qualified names. SQL datasets need every column qualified
 * (SPEC §2.3 rule 1) so a name shared by two joined tables is never ambiguous.
 */
export function unqualifiedColumns(expression: string): { name: string; at: number }[] {
  const tokens = lex(expression);
  const found: { name: string; at: number }[] = [];
  tokens.forEach((t, i) => {
    if (t.kind !== "word" && t.kind !== "quoted") return;
    const before = tokens[i - 1];
    const after = tokens[i + 1];
    const isPunct = (tok: SqlToken | undefined, text: string) => tok?.kind === "punct" && tok.text === text;
    if (isPunct(before, ".") || isPunct(after, ".") || isPunct(after, "(") || isPunct(before, "::")) return;
    if (t.kind === "word" && EXPRESSION_WORDS.has(t.text.toLowerCase())) return;
    // `AS alias` names an output, not an input column.
    if (before?.kind === "word" && before.text.toLowerCase() === "as") return;
    found.push({ name: t.text, at: t.at });
  });
  return found;
}
