import "server-only";
import type { TenantTx } from "@/lib/db/tenant";
import { unprocessable } from "@/lib/errors";
import { manifestValidationItems } from "@/lib/manifest/errors";
import { type ClickContext, type DrillTargetManifest, drillSlugs, filterTargets, ownClickContext } from "@/lib/manifest-check/interactions";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import { SQL_ALLOW_LIST, parseManifestCached } from "./manifest";

/**
 * Chart clicks on the server (issue 27): at save, a drill-through's target dashboard must exist
 * and take the clicked values (lib/manifest-check/interactions.ts checks them once the targets are
 * known); on a page, the viewer gets what it needs to act on a click (ClickContext), including
 * which targets it may open.
 */

const asTarget = (parsed: ParsedDashboard): DrillTargetManifest => ({ widgets: parsed.widgets, datasets: parsed.datasets, tabs: parsed.manifest.spec.tabs.map((t) => t.id) });

/**
 * 422 with line and column when a drill-through names a dashboard the organization does not have,
 * or one of its filters or tabs that the target lacks or that cannot take the clicked column. The
 * target is checked as viewers see it: its published version, else its draft. `ownSlug` is the
 * slug the manifest is saved under (a drill-through to it stays on the page).
 */
export async function checkDrillTargets(tx: TenantTx, specYaml: string, parsed: ParsedDashboard, ownSlug: string): Promise<void> {
  const slugs = drillSlugs(parsed.widgets);
  if (slugs.length === 0) return;
  const rows = await tx.dashboard.findMany({ where: { slug: { in: slugs } }, select: { id: true, slug: true, draftYaml: true, publishedVersion: true } });
  const targets = new Map<string, DrillTargetManifest | null>(slugs.map((slug) => [slug, null]));
  for (const row of rows) {
    if (row.slug === ownSlug) continue;
    const published = row.publishedVersion === null ? null : await tx.dashboardVersion.findUnique({ where: { dashboardId_version: { dashboardId: row.id, version: row.publishedVersion } }, select: { specYaml: true } });
    const target = parseManifestCached(published?.specYaml ?? row.draftYaml);
    // A target whose own manifest no longer validates exists: it is left unchecked rather than reported missing.
    if (target.ok) targets.set(row.slug, asTarget(target.value));
    else targets.delete(row.slug);
  }
  if (slugs.includes(ownSlug)) targets.set(ownSlug, asTarget(parsed));
  const result = parseDashboardYaml(specYaml, { sqlPolicy: SQL_ALLOW_LIST, drillTargets: targets });
  if (!result.ok) throw unprocessable(manifestValidationItems(result.errors));
}

/**
 * What a viewer of `parsed` (shown under `slug`) needs to act on clicks. `open` answers the
 * manifest of another dashboard when this viewer may open it (null otherwise): anonymous pages
 * (embeds, public links) open none, so they drill only within their own dashboard.
 */
export async function clickContext(parsed: ParsedDashboard, slug: string, open: (slug: string) => Promise<ParsedDashboard | null>): Promise<ClickContext> {
  const context = ownClickContext(parsed.widgets, parsed.datasets, parsed.manifest.spec.tabs.map((t) => t.id), slug);
  for (const [target, known] of Object.entries(context.drills)) {
    if (known) continue;
    const other = await open(target);
    if (other) context.drills[target] = { filters: filterTargets(other.widgets, other.datasets), tabs: other.manifest.spec.tabs.map((t) => t.id) };
  }
  return context;
}

/** An anonymous page's viewer opens no other dashboard. */
export const openNone = async (): Promise<null> => null;
