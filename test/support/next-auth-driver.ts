import NextAuth from "next-auth";
import { nextAuthOptions } from "@/lib/sso/next-auth";

/**
 * Runs next-auth's own handler (the real routes: csrf, credentials callback, session) with the app's
 * options, outside Next.js. Its App Router form reads `cookies()` from Next's request scope, which a
 * test does not have; its pages-API form takes the request's cookies and body as plain objects and
 * answers through a response object, which this driver records. Cookies persist across calls, as in
 * a browser.
 */
export interface NextAuthAnswer {
  status: number;
  body: unknown;
  location: string | null;
  /** Set-Cookie headers of this answer, as sent. */
  setCookies: string[];
}

export class NextAuthBrowser {
  readonly cookies = new Map<string, string>();

  constructor(readonly origin = "http://localhost:3000") {
    // What scripts/start.mjs sets for the server; without it next-auth warns and assumes localhost:3000.
    process.env.NEXTAUTH_URL ??= origin;
  }

  /** The `Cookie` header this browser sends. */
  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  sessionToken(): string | undefined {
    return this.cookies.get("next-auth.session-token");
  }

  async call(method: "GET" | "POST", segments: string[], body: Record<string, string> = {}, query: Record<string, string> = {}): Promise<NextAuthAnswer> {
    const headers: Record<string, string> = { host: new URL(this.origin).host, origin: this.origin, cookie: this.cookieHeader() };
    const answer: NextAuthAnswer = { status: 200, body: undefined, location: null, setCookies: [] };
    const head = new Map<string, string | string[]>();
    const res = {
      status(code: number) {
        answer.status = code;
        return res;
      },
      setHeader(name: string, value: string | string[]) {
        head.set(name.toLowerCase(), value);
        return res;
      },
      getHeader(name: string) {
        return head.get(name.toLowerCase());
      },
      json(value: unknown) {
        answer.body = value;
        return res;
      },
      send(value: unknown) {
        answer.body = value;
        return res;
      },
      end() {
        return res;
      },
    };
    const req = { method, query: { ...query, nextauth: segments }, cookies: Object.fromEntries(this.cookies), headers, body };
    await (NextAuth as unknown as (req: unknown, res: unknown, options: unknown) => Promise<unknown>)(req, res, await nextAuthOptions(segments));
    const setCookie = head.get("set-cookie");
    answer.setCookies = setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie];
    answer.location = (head.get("location") as string | undefined) ?? null;
    for (const line of answer.setCookies) {
      const [pair, ...attributes] = line.split(";").map((part) => part.trim());
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const value = decodeURIComponent(pair.slice(eq + 1));
      const expired = attributes.some((a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) <= Date.now()));
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return answer;
  }

  /** Signs in through next-auth's credentials callback as the sign-in form does; answers next-auth's answer. */
  async signIn(email: string, password: string, callbackUrl = "/"): Promise<NextAuthAnswer> {
    const csrf = await this.call("GET", ["csrf"]);
    const { csrfToken } = csrf.body as { csrfToken: string };
    return this.call("POST", ["callback", "credentials"], { email, password, csrfToken, callbackUrl, json: "true" });
  }

  /** `GET /api/auth/session`: what the browser's session polling does (and where next-auth renews the cookie). */
  session(): Promise<NextAuthAnswer> {
    return this.call("GET", ["session"]);
  }
}
