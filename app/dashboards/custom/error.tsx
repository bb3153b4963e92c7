"use client";

import styles from "@/components/dashboards/dashboards.module.css";

/** Shown when a dashboard page cannot load at all (database down, a stored manifest that no longer validates); widget failures stay inside their widget. */
export default function DashboardsError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className={styles.errorPage} role="alert">
      <h1>This page could not be loaded</h1>
      <p>Something went wrong on our side; nothing was changed.{error.digest ? ` (reference ${error.digest})` : ""}</p>
      <p>
        <button className="button" type="button" onClick={reset}>
          Try again
        </button>
      </p>
    </div>
  );
}
