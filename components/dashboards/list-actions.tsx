"use client";

import { useRouter } from "next/navigation";
import { useRef, useState, type FormEvent } from "react";
import { createDashboard, seedDashboards } from "@/lib/dashboards/contract";
import { callApi } from "@/components/api-client";
import { starterManifest } from "./starter-manifest";
import styles from "./dashboards.module.css";

const slugify = (name: string) =>
  name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);

/** "New dashboard" (name + slug, starts from a small working manifest) and "Load sample" for editors. */
export function ListActions({ hasSample }: { hasSample: boolean }) {
  const router = useRouter();
  const dialog = useRef<HTMLDialogElement>(null);
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [slugTouched, setSlugTouched] = useState(false);
  const [busy, setBusy] = useState<"create" | "sample" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sampleError, setSampleError] = useState<string | null>(null);

  async function loadSample() {
    setBusy("sample");
    setSampleError(null);
    try {
      const sample = await callApi(seedDashboards);
      router.push(`/dashboards/custom/${sample.slug}`);
    } catch (error) {
      setSampleError(`Could not load the sample: ${(error as Error).message}`);
    } finally {
      setBusy(null);
    }
  }

  async function create(event: FormEvent) {
    event.preventDefault();
    setBusy("create");
    setError(null);
    try {
      await callApi(createDashboard, { body: { name, slug, spec_yaml: starterManifest(name, slug) } });
      router.push(`/dashboards/custom/${slug}/edit`);
    } catch (error) {
      setError((error as Error).message);
    } finally {
      setBusy(null);
    }
  }

  return (
    <div className={styles.actions}>
      {sampleError && (
        <span className={styles.error} role="alert">
          {sampleError}
        </span>
      )}
      <button type="button" className="button" onClick={loadSample} disabled={busy !== null}>
        {busy === "sample" ? "Loading…" : hasSample ? "Reload sample" : "Load sample"}
      </button>
      <button type="button" className="button primary" onClick={() => dialog.current?.showModal()}>
        New dashboard
      </button>
      <dialog ref={dialog} className={styles.dialog} aria-labelledby="new-dashboard-title">
        <form className={styles.dialogBody} onSubmit={create}>
          <h2 id="new-dashboard-title">New dashboard</h2>
          <label className={styles.field}>
            <span>Name</span>
            <input
              required
              maxLength={200}
              value={name}
              onChange={(e) => {
                setName(e.target.value);
                if (!slugTouched) setSlug(slugify(e.target.value));
              }}
            />
          </label>
          <label className={styles.field}>
            <span>Slug (its address: /dashboards/custom/{slug || "…"})</span>
            <input
              required
              pattern="[a-z0-9]([a-z0-9\-]{0,62}[a-z0-9])?"
              value={slug}
              onChange={(e) => {
                setSlugTouched(true);
                setSlug(e.target.value);
              }}
            />
          </label>
          <span className={styles.hint}>It starts from a small working manifest that you edit next.</span>
          {error && (
            <p className={styles.error} role="alert">
              {error}
            </p>
          )}
          <div className={styles.dialogActions}>
            <button type="button" className="button" onClick={() => dialog.current?.close()}>
              Cancel
            </button>
            <button type="submit" className="button primary" disabled={busy !== null}>
              {busy === "create" ? "Creating…" : "Create and edit"}
            </button>
          </div>
        </form>
      </dialog>
    </div>
  );
}
