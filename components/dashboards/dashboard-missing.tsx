import Link from "next/link";
import styles from "./dashboards.module.css";

/** Not found and not allowed look the same, so a hidden dashboard's existence is not revealed. */
export function DashboardMissing({ bare = false }: { bare?: boolean }) {
  return (
    <div className={styles.errorPage} role="alert" data-testid="dashboard-missing">
      <h1>Dashboard not found</h1>
      <p>It does not exist in your organization, or your role may not view it.</p>
      {!bare && (
        <p>
          <Link href="/dashboards/custom">Back to all dashboards</Link>
        </p>
      )}
    </div>
  );
}
