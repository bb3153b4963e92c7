import styles from "@/components/dashboards/dashboards.module.css";

/** While the server computes a dashboard's first data: the page's shape, so nothing jumps when it arrives. */
export default function DashboardsLoading() {
  return (
    <div className={styles.pageWide} aria-busy="true" aria-label="Loading dashboard">
      <div className={styles.loadingShape}>
        <span style={{ height: 36, width: "40%" }} />
        <span style={{ height: 56 }} />
        <span style={{ height: 84 }} />
        <div className={styles.loadingRow}>
          <span />
          <span />
          <span />
          <span />
        </div>
        <span style={{ height: 300 }} />
      </div>
    </div>
  );
}
