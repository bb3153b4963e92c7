"use client";

import { useState } from "react";
import { ApiClientError, callApi, type ResponseOf } from "@/components/api-client";
import { useApiRead } from "@/components/api-hooks";
import { PageNote } from "@/components/page-note";
import { Role } from "@/lib/access/roles";
import { deleteMember, inviteMember, listInvitations, listMembers, resetMemberPassword, revokeInvitation, updateMember } from "@/lib/members/contract";

type MemberList = ResponseOf<typeof listMembers>;
type Member = MemberList["items"][number];
type InvitationList = ResponseOf<typeof listInvitations>;
type Location = { id: string; name: string };

const when = (iso: string | null) => (iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "never");
const message = (error: unknown) => (error instanceof ApiClientError ? error.message : "The server could not be reached");
const roleName = (role: string) => role.replace("_", " ");

/** A link shown once (an invitation or a password reset), with how its e-mail went. */
interface ShownLink {
  what: string;
  link: string;
  detail: string;
}

function LocationPicker({ id, locations, value, onChange }: { id: string; locations: Location[]; value: string[]; onChange: (ids: string[]) => void }) {
  return (
    <select id={id} multiple value={value} onChange={(e) => onChange([...e.target.selectedOptions].map((o) => o.value))} aria-label="Locations (none selected: every location)">
      {locations.map((l) => (
        <option key={l.id} value={l.id}>{l.name}</option>
      ))}
    </select>
  );
}

/** One member's row: role and locations edited in place, deactivate, reset link, delete. */
function MemberRow({ member, locations, self, onChanged, onLink, onError }: { member: Member; locations: Location[]; self: boolean; onChanged: () => Promise<unknown>; onLink: (l: ShownLink) => void; onError: (m: string) => void }) {
  const [editing, setEditing] = useState(false);
  const [role, setRole] = useState<Role>(member.role);
  const [scope, setScope] = useState<string[]>(member.location_ids);
  const names = new Map(locations.map((l) => [l.id, l.name]));
  async function act(run: () => Promise<unknown>) {
    try {
      await run();
      await onChanged();
    } catch (error) {
      onError(message(error));
    }
  }
  const save = () => act(async () => {
    await callApi(updateMember, { params: { id: member.id }, body: { role, location_ids: scope } });
    setEditing(false);
  });
  const setStatus = (status: "active" | "deactivated") => act(() => callApi(updateMember, { params: { id: member.id }, body: { status } }));
  const remove = () => {
    if (window.confirm(`Delete ${member.email}? Their account is removed; what they made stays with the organization.`)) void act(() => callApi(deleteMember, { params: { id: member.id } }));
  };
  const reset = () => act(async () => {
    const sent = await callApi(resetMemberPassword, { params: { id: member.id } });
    onLink({ what: `Password reset link for ${member.email}`, link: sent.link, detail: sent.delivery_detail });
  });
  return (
    <tr data-testid={`member-${member.email}`}>
      <td>{member.name}{self && <span className="muted"> (you)</span>}</td>
      <td>{member.email}</td>
      <td>
        {editing ? (
          <select aria-label={`Role of ${member.email}`} value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {Role.options.map((r) => <option key={r} value={r}>{roleName(r)}</option>)}
          </select>
        ) : roleName(member.role)}
      </td>
      <td>
        {editing ? <LocationPicker id={`locations-${member.id}`} locations={locations} value={scope} onChange={setScope} /> : member.location_ids.length === 0 ? "every location" : member.location_ids.map((id) => names.get(id) ?? id).join(", ")}
      </td>
      <td>{member.status === "active" ? <span className="chip">active</span> : <span className="chip bad">deactivated</span>}</td>
      <td>{when(member.last_sign_in_at)}</td>
      <td>
        {editing ? (
          <>
            <button type="button" className="button primary" onClick={() => void save()}>Save</button>{" "}
            <button type="button" className="link-button" onClick={() => setEditing(false)}>Cancel</button>
          </>
        ) : (
          <>
            <button type="button" className="link-button" onClick={() => setEditing(true)}>Change role or locations</button>{" "}
            {member.status === "active" ? (
              <>
                <button type="button" className="link-button" onClick={() => void reset()}>Reset password</button>{" "}
                {!self && <button type="button" className="link-button" onClick={() => void setStatus("deactivated")}>Deactivate</button>}
              </>
            ) : (
              <button type="button" className="link-button" onClick={() => void setStatus("active")}>Reactivate</button>
            )}{" "}
            {!self && <button type="button" className="button danger" onClick={remove}>Delete</button>}
          </>
        )}
      </td>
    </tr>
  );
}

/** Members and invitations of the organization (issue 43 §2). */
export function MembersAdmin(props: { selfId: string; initialMembers: MemberList; initialInvitations: InvitationList; locations: Location[]; listPage: { limit: number; offset: number } }) {
  const members = useApiRead(listMembers, { query: props.listPage }, { fallbackData: props.initialMembers });
  const invitations = useApiRead(listInvitations, { query: props.listPage }, { fallbackData: props.initialInvitations });
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("analyst");
  const [scope, setScope] = useState<string[]>([]);
  const [shown, setShown] = useState<ShownLink | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const refresh = () => Promise.all([members.mutate(), invitations.mutate()]);

  async function invite(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const made = await callApi(inviteMember, { body: { email, role, location_ids: scope } });
      setShown({ what: `Invitation for ${made.email}`, link: made.link, detail: made.delivery_detail });
      setEmail("");
      await refresh();
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  }

  async function revoke(id: string) {
    try {
      await callApi(revokeInvitation, { params: { id } });
      await refresh();
    } catch (e) {
      setError(message(e));
    }
  }

  const memberList = members.data ?? props.initialMembers;
  const invitationList = invitations.data ?? props.initialInvitations;
  const pending = invitationList.items.filter((i) => i.status === "pending");
  return (
    <>
      {shown && (
        <div className="card" role="status" style={{ marginBottom: "1rem" }} data-testid="shown-link">
          <h2>{shown.what}</h2>
          <p>{shown.detail}. The link works once and is not shown again:</p>
          <p>
            <code style={{ wordBreak: "break-all" }} data-testid="shown-link-url">{shown.link}</code>{" "}
            <button type="button" className="link-button" onClick={() => void navigator.clipboard?.writeText(shown.link)}>Copy</button>{" "}
            <button type="button" className="link-button" onClick={() => setShown(null)}>Done</button>
          </p>
        </div>
      )}
      {error && <div className="error-box" role="alert">{error}</div>}
      <form className="card" style={{ marginBottom: "1rem" }} onSubmit={invite} aria-label="Invite a member">
        <h2>Invite someone</h2>
        <div className="field">
          <label htmlFor="invite-email">E-mail</label>
          <input id="invite-email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="invite-role">Role</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {Role.options.map((r) => <option key={r} value={r}>{roleName(r)}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor="invite-locations">Locations (none selected: every location)</label>
          <LocationPicker id="invite-locations" locations={props.locations} value={scope} onChange={setScope} />
        </div>
        <button type="submit" className="button primary" disabled={busy || !email.trim()}>Invite</button>
      </form>
      <table className="grid-table" aria-label="Members">
        <thead>
          <tr><th>Name</th><th>E-mail</th><th>Role</th><th>Locations</th><th>Status</th><th>Last sign-in</th><th /></tr>
        </thead>
        <tbody>
          {memberList.items.map((m) => (
            <MemberRow key={m.id} member={m} locations={props.locations} self={m.id === props.selfId} onChanged={refresh} onLink={setShown} onError={setError} />
          ))}
        </tbody>
      </table>
      <PageNote page={memberList} what="members" />
      <h2>Pending invitations</h2>
      <table className="grid-table" aria-label="Pending invitations">
        <thead><tr><th>E-mail</th><th>Role</th><th>Expires</th><th /></tr></thead>
        <tbody>
          {pending.length === 0 && <tr><td colSpan={4} className="muted">None.</td></tr>}
          {pending.map((i) => (
            <tr key={i.id}>
              <td>{i.email}</td>
              <td>{roleName(i.role)}</td>
              <td>{when(i.expires_at)}</td>
              <td><button type="button" className="button danger" onClick={() => void revoke(i.id)}>Revoke</button></td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
