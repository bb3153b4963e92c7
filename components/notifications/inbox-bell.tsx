"use client";

import { useEffect, useRef, useState } from "react";
import type { z } from "zod";
import { markInboxRead, type InboxItemView } from "@/lib/notifications/contract";
import { callApi } from "@/components/api-client";
import { useInbox } from "@/components/api-hooks";
import styles from "./notifications.module.css";
import { formatInstant } from "@/lib/dashboards/format";
import { useOrgTimeZone } from "@/components/org-time-zone";

type InboxItem = z.output<typeof InboxItemView>;

interface Props {
  /** How often to refresh the unread count, in seconds (default 60). */
  refreshSeconds?: number;
}

/** The bell lists the latest few; `unread` counts them all. */
const INBOX_PAGE_SIZE = 20;
const SEVERITY_TONE: Record<string, string> = { critical: "bad", warning: "warn", info: "" };

function BellIcon() {
  return (
    <svg width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
      <path d="M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9" />
      <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />
    </svg>
  );
}

/**
 * The signed-in user's in-app notifications: a bell with the unread count and
 * a panel listing the latest items; opening an item marks it read. It reloads
 * when opened and every `refreshSeconds`; Escape or a click outside closes it.
 */
export function InboxBell({ refreshSeconds = 60 }: Props) {
  const inbox = useInbox(refreshSeconds, INBOX_PAGE_SIZE);
  const timeZone = useOrgTimeZone();
  const items = inbox.data?.items ?? [];
  const unread = inbox.data?.unread ?? 0;
  const failed = inbox.error !== undefined;
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    const onClick = (e: MouseEvent) => {
      if (root.current && !root.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setOpen(false);
    };
    document.addEventListener("mousedown", onClick);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("mousedown", onClick);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);

  function toggle() {
    if (!open) void inbox.mutate();
    setOpen((o) => !o);
  }

  async function markRead(item: InboxItem) {
    if (item.read_at) return;
    const updated = await callApi(markInboxRead, { params: { id: item.id } }).catch(() => null);
    if (!updated) return;
    await inbox.mutate((current) => current && { ...current, items: current.items.map((i) => (i.id === item.id ? updated : i)), unread: Math.max(0, current.unread - 1) }, { revalidate: false });
  }

  return (
    <div className={styles.bell} ref={root}>
      <button className={styles.bellButton} type="button" aria-label={`Notifications, ${unread} unread`} aria-expanded={open} aria-haspopup="dialog" onClick={toggle}>
        <BellIcon />
        {unread > 0 && <span className={styles.badge} data-testid="inbox-unread">{unread > 99 ? "99+" : unread}</span>}
      </button>
      {open && (
        <div className={styles.panel} role="dialog" aria-label="Notifications">
          <div className={styles.panelHead}>
            <span>Notifications</span>
            <span className="muted">{unread} unread</span>
          </div>
          {failed && items.length === 0 ? (
            <p className={styles.panelEmpty} role="alert">Notifications could not be loaded; try again in a moment.</p>
          ) : items.length === 0 ? (
            <p className={styles.panelEmpty}>You&apos;re all caught up.</p>
          ) : (
            items.map((item) => (
              <button key={item.id} type="button" className={`${styles.item} ${item.read_at ? "" : styles.unread}`} onClick={() => void markRead(item)}>
                <div className={styles.itemTitle}>
                  <span>{item.title}</span>
                </div>
                <div className={styles.itemMeta}>
                  <span className={`chip ${SEVERITY_TONE[item.severity] ?? ""}`}>{item.severity}</span> {formatInstant(item.created_at, timeZone)}
                  {item.read_at ? "" : " · click to mark read"}
                </div>
                <div className={styles.body}>{item.body}</div>
              </button>
            ))
          )}
        </div>
      )}
    </div>
  );
}
