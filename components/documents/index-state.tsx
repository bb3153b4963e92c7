import type { DocumentRecord } from "@/lib/documents/contract";
import styles from "./documents.module.css";
import { formatInstant } from "@/lib/dashboards/format";
import { useOrgTimeZone } from "@/components/org-time-zone";

/**
 * What the search index of a document is doing: live progress while
 * indexing, the chunk count once indexed, stale chips (file replaced, or
 * indexed with another model than the active one), and why it failed.
 */
export function IndexState({ doc, activeModel, error }: { doc: DocumentRecord; activeModel: string; error: string | null }) {
  const timeZone = useOrgTimeZone();
  const modelStale = doc.index_model_stale && doc.status !== "indexing";
  const job = doc.index_job;
  const queued = job?.state === "queued" && doc.status !== "indexing";
  // A job given up while a previous index stays in use (status indexed): its reason is the job's.
  const jobFailure = job?.state === "failed" && job.reason && job.reason !== doc.status_reason ? job.reason : null;
  return (
    <div className={styles.indexState}>
      {queued && (
        <span className="muted" data-testid="index-queued" title={job.reason ?? undefined}>
          {job.attempts > 0 && job.next_attempt_at
            ? `Attempt ${job.attempts} failed; retrying at ${formatInstant(job.next_attempt_at, timeZone)}`
            : job.reason?.startsWith("waiting")
              ? "Queued: waiting for other documents to finish"
              : "Queued for indexing"}
        </span>
      )}
      {queued && job.attempts > 0 && job.reason && <span className={styles.failReason}>{job.reason}</span>}
      {doc.status === "indexing" && (
        <div className={styles.indexProgress} data-testid="index-progress">
          {doc.index_progress_total > 0 ? (
            <>
              <progress max={doc.index_progress_total} value={doc.index_progress_done} aria-label={`Indexing progress of ${doc.title}`} />
              <span className={styles.progressText}>{doc.index_progress_done} / {doc.index_progress_total} chunks</span>
            </>
          ) : (
            <>
              {/* No value: an indeterminate bar while the text is extracted and the chunk count is not known yet. */}
              <progress aria-label={`Reading ${doc.title}`} />
              <span className={styles.progressText}>Reading the file…</span>
            </>
          )}
        </div>
      )}
      {doc.status === "indexed" && (
        <span className="muted" data-testid="chunk-count" title={doc.indexed_at ? `Indexed ${formatInstant(doc.indexed_at, timeZone)} with ${doc.index_model}` : undefined}>
          {doc.chunk_count} chunk{doc.chunk_count === 1 ? "" : "s"}
        </span>
      )}
      {doc.index_stale && (
        <span className={`chip warn ${styles.plainChip}`} data-testid="stale-chip" title="The file was replaced after indexing; re-index to search the new content">
          File replaced
        </span>
      )}
      {modelStale && (
        <span className={`chip warn ${styles.plainChip}`} data-testid="stale-chip" title="Search uses the active model; re-index to search this document">
          Indexed with {doc.index_model}, active is {activeModel}
        </span>
      )}
      {doc.status === "failed" && doc.status_reason && (
        <span className={styles.failReason} data-testid="failure-reason">{job?.state === "failed" && job.reason ? job.reason : doc.status_reason}</span>
      )}
      {jobFailure && doc.status !== "failed" && (
        <span className={styles.failReason} data-testid="failure-reason">{jobFailure}</span>
      )}
      {error && error !== doc.status_reason && (
        <span className={styles.failReason} role="alert">{error}</span>
      )}
    </div>
  );
}
