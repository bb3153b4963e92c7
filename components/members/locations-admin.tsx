"use client";

import { useState } from "react";
import { ApiClientError, callApi, type ResponseOf } from "@/components/api-client";
import { useApiRead } from "@/components/api-hooks";
import { PageNote } from "@/components/page-note";
import { createLocation, listLocations, updateLocation } from "@/lib/locations/contract";

type LocationList = ResponseOf<typeof listLocations>;
type Location = LocationList["items"][number];

const message = (error: unknown) => (error instanceof ApiClientError ? error.message : "The server could not be reached");

function LocationRow({ location, onChanged, onError }: { location: Location; onChanged: () => Promise<unknown>; onError: (m: string) => void }) {
  const [editing, setEditing] = useState(false);
  const [code, setCode] = useState(location.code);
  const [name, setName] = useState(location.name);
  async function change(body: { code?: string; name?: string; archived?: boolean }) {
    try {
      await callApi(updateLocation, { params: { id: location.id }, body });
      setEditing(false);
      await onChanged();
    } catch (error) {
      onError(message(error));
    }
  }
  return (
    <tr data-testid={`location-${location.code}`}>
      <td>{editing ? <input aria-label="Code" value={code} onChange={(e) => setCode(e.target.value)} /> : <code>{location.code}</code>}</td>
      <td>{editing ? <input aria-label="Name" value={name} onChange={(e) => setName(e.target.value)} /> : location.name}</td>
      <td>{location.city}</td>
      <td>{location.region}</td>
      <td>{location.archived_at ? <span className="chip bad">archived</span> : <span className="chip">active</span>}</td>
      <td>
        {editing ? (
          <>
            <button type="button" className="button primary" onClick={() => void change({ code, name })}>Save</button>{" "}
            <button type="button" className="link-button" onClick={() => setEditing(false)}>Cancel</button>
          </>
        ) : (
          <>
            <button type="button" className="link-button" onClick={() => setEditing(true)}>Rename</button>{" "}
            <button type="button" className="link-button" onClick={() => void change({ archived: !location.archived_at })}>{location.archived_at ? "Restore" : "Archive"}</button>
          </>
        )}
      </td>
    </tr>
  );
}

/** The organization's locations: create, rename, recode, archive and restore (issue 43 §3). */
export function LocationsAdmin({ initial, listQuery }: { initial: LocationList; listQuery: { limit: number; offset: number; archived: "true" } }) {
  const locations = useApiRead(listLocations, { query: listQuery }, { fallbackData: initial });
  const [v, setV] = useState({ code: "", name: "", city: "", region: "" });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function create(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await callApi(createLocation, { body: v });
      setV({ code: "", name: "", city: "", region: "" });
      await locations.mutate();
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  }
  const list = locations.data ?? initial;
  const field = (key: keyof typeof v, label: string, required = false) => (
    <div className="field">
      <label htmlFor={`location-${key}`}>{label}</label>
      <input id={`location-${key}`} required={required} value={v[key]} onChange={(e) => setV({ ...v, [key]: e.target.value })} />
    </div>
  );
  return (
    <>
      {error && <div className="error-box" role="alert">{error}</div>}
      <form className="card" style={{ marginBottom: "1rem" }} onSubmit={create} aria-label="Create a location">
        <h2>New location</h2>
        {field("code", "Code", true)}
        {field("name", "Name", true)}
        {field("city", "City")}
        {field("region", "Region")}
        <button type="submit" className="button primary" disabled={busy}>Create</button>
      </form>
      <table className="grid-table" aria-label="Locations">
        <thead><tr><th>Code</th><th>Name</th><th>City</th><th>Region</th><th>Status</th><th /></tr></thead>
        <tbody>
          {list.items.map((l) => <LocationRow key={l.id} location={l} onChanged={() => locations.mutate()} onError={setError} />)}
        </tbody>
      </table>
      <PageNote page={list} what="locations" />
    </>
  );
}
