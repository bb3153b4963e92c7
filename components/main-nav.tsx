"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useState } from "react";

export interface NavLink {
  href: string;
  label: string;
}

/**
 * The app's sections. Wide screens show the links in the top bar; at 640 px and less they sit
 * behind a Menu button (a disclosure: aria-expanded, Escape closes it) and open as a list under
 * the bar, so the bar fits a phone instead of scrolling sideways with sections out of sight.
 */
export function MainNav({ links }: { links: readonly NavLink[] }) {
  const [open, setOpen] = useState(false);
  const pathname = usePathname();
  return (
    <nav aria-label="Main" className="main-nav" data-open={open} onKeyDown={(event) => event.key === "Escape" && setOpen(false)}>
      <button type="button" className="menu-button" aria-expanded={open} aria-controls="main-nav-links" onClick={() => setOpen((was) => !was)}>
        <span aria-hidden="true">☰</span> Menu
      </button>
      <ul id="main-nav-links">
        {links.map((link) => (
          <li key={link.href}>
            <Link href={link.href} aria-current={pathname === link.href || pathname.startsWith(`${link.href}/`) ? "page" : undefined} onClick={() => setOpen(false)}>
              {link.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
