import { test } from "@playwright/test";

/**
 * The Origin a page of this site sends: cookie-authenticated writes from Playwright's request
 * context carry none of their own, and the API refuses them without it (the CSRF check).
 */
export function sameOrigin(): { origin: string } {
  return { origin: String(test.info().project.use.baseURL) };
}
