import "server-only";
import { toJsonValue } from "@/lib/json";
import { DomainError } from "@/lib/errors";
import type { ClickContext } from "@/lib/manifest-check/interactions";
import { clickContext, openNone } from "./interactions";
import { expiredEmbed, verifyEmbedToken, type ExpiredEmbed } from "./embeds";
import type { EmbedSession } from "./embed-session";
import { UNAVAILABLE_TO_ANONYMOUS, grantForEmbed, grantForPublic, type GrantedDashboard } from "./policy";
import { grantedLocale, lockedOver, queryGranted } from "./query";
import type { WidgetResults } from "./contract";
import { filtersFromParams, firstQueryWidgetIds, orgView, renderOnlyView, type ViewManifest } from "./wiring";

type Params = Record<string, string | string[] | undefined>;

/** What an anonymous page (embed or public link) sends to the browser: render data only, never SQL or datasets. */
export interface AnonymousPage {
  name: string;
  view: ViewManifest;
  filters: Record<string, unknown>;
  lockedFilters: Record<string, unknown>;
  results: WidgetResults;
  timeZone: string;
  /** What its charts' clicks may do: within this dashboard only. */
  clicks: ClickContext;
}

/**
 * Why an anonymous page shows no dashboard: a link that is not valid (`unavailable: false`), or a
 * dashboard whose stored manifest no longer passes validation (`unavailable: true`, the neutral
 * UNAVAILABLE_TO_ANONYMOUS sentence, nothing of the problems: they name the SQL).
 */
export type AnonymousRefusal = { ok: false; unavailable: boolean; reason: string };

/**
 * An embed's page also says what the iframe needs to renew its token (lib/dashboards/embed-session.ts); a link that
 * has only expired says what it needs to ask its framing page for a new one.
 */
export type EmbedPage = ({ ok: true; session: EmbedSession } & AnonymousPage) | (AnonymousRefusal & { renewal?: ExpiredEmbed });
export type PublicPage = ({ ok: true } & AnonymousPage) | AnonymousRefusal;

const unavailable: AnonymousRefusal = { ok: false, unavailable: true, reason: UNAVAILABLE_TO_ANONYMOUS };

/**
 * The page of a granted version, or null when its stored manifest no longer validates (nothing is
 * queried then). Its first query runs on the same grant (queryGranted): the policy is asked once per page.
 */
async function pageOf(granted: GrantedDashboard, params: Params, lockedFilters: Record<string, unknown>): Promise<AnonymousPage | null> {
  if (!granted.parsed.ok) return null;
  const { timeZone, currency } = await grantedLocale(granted);
  const full = orgView(granted.parsed.value, currency);
  const filters = filtersFromParams(full, params);
  const visible = firstQueryWidgetIds(full, params);
  const [answer, clicks] = await Promise.all([
    queryGranted(granted, "anonymous", lockedOver(lockedFilters, filters), visible, { timeZone }),
    clickContext(granted.parsed.value, granted.slug, openNone),
  ]);
  return {
    name: granted.name,
    view: toJsonValue(renderOnlyView(full)) as ViewManifest,
    filters,
    lockedFilters,
    results: toJsonValue(answer.widgets) as WidgetResults,
    timeZone,
    clicks,
  };
}

/** An embed token's page: the version its grant is bound to, under its creator's scope; a bad token is a reason, not an exception. */
export async function loadEmbed(token: string, params: Params): Promise<EmbedPage> {
  try {
    const grant = await verifyEmbedToken(token);
    const page = await pageOf(await grantForEmbed(grant), params, grant.lockedFilters);
    if (!page) return unavailable;
    const session: EmbedSession = {
      embedId: grant.embedId,
      dashboardId: grant.dashboardId,
      version: grant.version,
      expiresAt: grant.expiresAt.toISOString(),
      allowedOrigins: grant.allowedOrigins,
      downloads: grant.downloads,
    };
    return { ok: true, session, ...page };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const reason = typeof error.detail === "string" ? error.detail : "This embed link is not valid";
    const renewal = await expiredEmbed(token);
    return renewal ? { ok: false, unavailable: false, reason, renewal } : { ok: false, unavailable: false, reason };
  }
}

/**
 * A public dashboard's page (platform.public), or null when there is none to show (404); a public one
 * whose stored manifest no longer validates is the neutral unavailable refusal, not a 404.
 */
export async function loadPublic(orgSlug: string, dashboardSlug: string, params: Params): Promise<PublicPage | null> {
  const granted = await grantForPublic(orgSlug, dashboardSlug);
  if (!granted) return null;
  const page = await pageOf(granted, params, {});
  return page ? { ok: true, ...page } : unavailable;
}
