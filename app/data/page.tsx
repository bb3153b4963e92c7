import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { sourceLimits } from "@/lib/data/limits";
import { listDataTables } from "@/lib/data/operations";
import { invoke } from "@/lib/operation";
import { DataClient } from "@/components/data/data-client";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Data" };

/** The organization's own tables (issue 42): every member lists them, admins load files and drop tables (docs/data.md). */
export default async function DataPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const { items: tables } = await invoke(listDataTables, principal);
  const canManage = principal.role === "admin";
  return (
    <div className="page">
      <h1>Data</h1>
      <p className="muted">
        {canManage
          ? "Your organization's own tables. Load a CSV, Excel, Parquet or NDJSON file into a table, then chart it in any dashboard by its name."
          : "Your organization's own tables, which dashboards read by name. Only admins load files or drop tables."}
      </p>
      <DataClient initial={tables} canManage={canManage} maxBytes={sourceLimits().maxBytes} />
    </div>
  );
}
