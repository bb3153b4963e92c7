"use client";

import { useState } from "react";
import { callApi, type ResponseOf } from "@/components/api-client";
import { useApiRead } from "@/components/api-hooks";
import { Field, useSubmit } from "@/components/members/public-forms";
import { createInstanceOrganization, listInstanceOrganizations } from "@/lib/instance/contract";
import type { PageQuery } from "@/lib/pagination";

type OrganizationList = ResponseOf<typeof listInstanceOrganizations>;
type Created = ResponseOf<typeof createInstanceOrganization>;

const EMPTY = { organization_name: "", slug: "", time_zone: "UTC", currency: "USD", admin_email: "" };

/** The install's organizations and the form that makes one, with its first admin's link shown once (as `quarry init` prints it). */
export function OrganizationsAdmin({ initial, listPage }: { initial: OrganizationList; listPage: PageQuery }) {
  const list = useApiRead(listInstanceOrganizations, { query: listPage }, { fallbackData: initial });
  const [v, setV] = useState(EMPTY);
  const [made, setMade] = useState<Created | null>(null);
  const set = (key: keyof typeof v) => (value: string) => setV({ ...v, [key]: value });
  const form = useSubmit(async () => {
    setMade(await callApi(createInstanceOrganization, { body: v }));
    setV(EMPTY);
    await list.mutate();
  });
  const organizations = list.data ?? initial;
  return (
    <>
      <table className="grid-table" aria-label="Organizations">
        <thead>
          <tr><th>Name</th><th>Slug</th><th>Members</th><th>Time zone</th><th>Currency</th><th>Created</th></tr>
        </thead>
        <tbody>
          {organizations.items.map((o) => (
            <tr key={o.id} data-testid={`organization-${o.slug}`}>
              <td>{o.name}</td><td>{o.slug}</td><td>{o.members}</td><td>{o.time_zone}</td><td>{o.currency}</td><td>{o.created_at.slice(0, 10)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {organizations.total > organizations.items.length && <p className="muted">The first {organizations.items.length} of {organizations.total}, oldest first.</p>}

      {made && (
        <div className="card" role="status">
          <h2>{made.created ? `${made.organization.name} is made` : `${made.organization.name} has no member yet: a new link replaces the last one`}</h2>
          <p>Send this link to {made.admin_email}; it works once and is not shown again:</p>
          <p><input readOnly aria-label="Invitation link" value={made.link} onFocus={(e) => e.currentTarget.select()} style={{ width: "100%" }} /></p>
        </div>
      )}
      <form className="card" onSubmit={form.submit} aria-label="Make an organization">
        <h2>Make an organization</h2>
        <Field id="org-name" label="Organization name" value={v.organization_name} onChange={set("organization_name")} />
        <Field id="org-slug" label="Short name (slug)" value={v.slug} onChange={set("slug")} hint="Lower-case letters, digits and hyphens, e.g. acme" />
        <Field id="org-time-zone" label="Time zone" value={v.time_zone} onChange={set("time_zone")} hint="IANA name, e.g. Europe/Berlin" />
        <Field id="org-currency" label="Currency" value={v.currency} onChange={(c) => set("currency")(c.toUpperCase())} hint="ISO 4217 code, e.g. EUR" />
        <Field id="org-admin-email" label="First admin's e-mail" type="email" value={v.admin_email} onChange={set("admin_email")} hint="They choose their name and password through the link" />
        <button type="submit" className="button primary" disabled={form.busy}>Make the organization</button>
        {form.error && <div className="error-box" role="alert">{form.error}</div>}
      </form>
    </>
  );
}
