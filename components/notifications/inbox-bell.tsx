"use client";

import { useCallback, useEffect, useState } from "react";
import styles from "./notifications.module.css";

interface InboxItem {
  id: string;
  title: string;
  body: string;
  severity: string;
  created_at: string;
  read_at: string | null;
}

interface Props {
  /** How often to refresh the unread count, in seconds (default 60). */
  refreshSeconds?: number;
}

/**
 * The signed-in user's in-app notifications: a bell with the unread count and
 * a panel listing the latest items; opening an item marks it read. Mount it in
 * the layout for signed-in users (it calls /api/v1/notifications/inbox with
 * the session cookie).
 */
export function InboxBell({ refreshSeconds = 60 }: Props) {
  const [items, setItems] = useState<InboxItem[]>([]);
  const [unread, setUnread] = useState(0);
  const [open, setOpen] = useState(false);

  const load = useCallback(async () => {
    const res = await fetch("/api/v1/notifications/inbox?limit=20", { cache: "no-store" });
    if (!res.ok) return;
    const body = (await res.json()) as { items: InboxItem[]; unread: number };
    setItems(body.items);
    setUnread(body.unread);
  }, []);

  useEffect(() => {
    const first = setTimeout(() => void load(), 0);
    const timer = setInterval(() => void load(), refreshSeconds * 1000);
    return () => {
      clearTimeout(first);
      clearInterval(timer);
    };
  }, [load, refreshSeconds]);

  async function markRead(item: InboxItem) {
    if (item.read_at) return;
    const res = await fetch(`/api/v1/notifications/inbox/${item.id}/read`, { method: "POST" });
    if (!res.ok) return;
    const updated = (await res.json()) as InboxItem;
    setItems((list) => list.map((i) => (i.id === item.id ? updated : i)));
    setUnread((n) => Math.max(0, n - 1));
  }

  return (
    <div className={styles.bell}>
      <button className="link-button" type="button" aria-label={`Notifications, ${unread} unread`} aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        🔔{unread > 0 && <span className={styles.badge}>{unread > 99 ? "99+" : unread}</span>}
      </button>
      {open && (
        <div className={styles.panel} role="dialog" aria-label="Notifications">
          {items.length === 0 ? <p className="muted">No notifications.</p> : items.map((item) => (
            <div key={item.id} className={`${styles.item} ${item.read_at ? "" : styles.unread}`} onClick={() => void markRead(item)}>
              <div><span className="chip">{item.severity}</span> {item.title}</div>
              <div className="muted">{new Date(item.created_at).toLocaleString()}</div>
              <div className={styles.body}>{item.body}</div>
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
