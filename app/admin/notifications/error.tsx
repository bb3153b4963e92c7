"use client";

/** Shown when the notifications admin page cannot load (database down, a failing query). */
export default function NotificationsAdminError({ reset }: { error: Error; reset: () => void }) {
  return (
    <div className="page">
      <h1>Notifications</h1>
      <div className="error-box" role="alert">
        The notification settings could not be loaded. Nothing was changed.{" "}
        <button className="link-button" type="button" onClick={reset}>Try again</button>
      </div>
    </div>
  );
}
