import Link from "next/link";
import type { ValidationItem } from "@/lib/errors";
import { formatPath, manifestErrorsFromItems } from "@/lib/manifest/errors";
import styles from "./dashboards.module.css";

interface UnpassableDashboardProps {
  slug: string;
  /** The version whose stored manifest failed: a published number or the draft. */
  version: number | "draft";
  /** Its problems, for editors; null for viewers, who are told to ask an editor and never see the SQL they name. */
  errors: ValidationItem[] | null;
}

/**
 * A dashboard whose stored manifest no longer passes validation (the rules were tightened after it
 * was saved): nothing of it is rendered or queried. Editors get the problems with line and column
 * and a way into the editor; viewers a short sentence (docs/dashboards-viewer.md).
 */
export function UnpassableDashboard({ slug, version, errors }: UnpassableDashboardProps) {
  const editHref = `/dashboards/custom/${encodeURIComponent(slug)}/edit`;
  if (errors === null) {
    return (
      <div className={styles.errorBox} role="alert" data-testid="dashboard-unpassable">
        <strong>This dashboard no longer passes Quarry&apos;s checks.</strong>
        <p className="muted" style={{ margin: "0.4rem 0 0" }}>
          It cannot be shown until it is fixed. Ask an editor (an admin or general manager of your organization) to fix it.
        </p>
      </div>
    );
  }
  const problems = manifestErrorsFromItems(errors);
  return (
    <div className={styles.errorBox} role="alert" data-testid="dashboard-unpassable">
      <strong>This dashboard no longer passes Quarry&apos;s checks.</strong>
      <p className="muted" style={{ margin: "0.4rem 0 0.6rem" }}>
        {version === "draft" ? "Its draft" : `Published version ${version}`} was saved before Quarry&apos;s validation rules were tightened, and
        nothing of it is shown or queried until it is fixed.{" "}
        {version === "draft" ? "" : "Viewers, embeds and public links see it as unavailable: save a fixed draft and publish it."}
      </p>
      <ul className={styles.problems} aria-label="Manifest problems" data-testid="manifest-problems" style={{ maxHeight: "none", marginBottom: "0.7rem" }}>
        {problems.map((e, i) => (
          <li key={i}>
            <code>
              line {e.line}:{e.column}
            </code>
            {e.document > 0 ? `document ${e.document} ` : ""}
            {formatPath(e.path) ? `${formatPath(e.path)}: ` : ""}
            {e.message}
          </li>
        ))}
      </ul>
      <Link className="button primary" href={editHref}>
        Fix it in the editor
      </Link>
    </div>
  );
}
