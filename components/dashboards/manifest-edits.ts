"use client";

import { createContext, useContext } from "react";

/**
 * The manifest editor's one undo history, for every way the YAML changes: typing, the widget builder and layout
 * mode. Builder and layout compute the whole next text (lib/manifest/yaml-widget-edit.ts, yaml-layout-edit.ts) and
 * `apply` it; the editor turns it into the smallest change of its document, one undo step of CodeMirror's history,
 * so Ctrl+Z in the editor and the Undo button undo a drag or a builder save exactly as they undo typing.
 */
export interface ManifestEdits {
  /** The manifest text as the editor holds it now (unsaved edits included). */
  text: string;
  /** Replaces the text as one undoable step; `label` is announced to screen readers ("Moved Revenue to column 4"). */
  apply(next: string, label: string): void;
  undo(): void;
  redo(): void;
  canUndo: boolean;
  canRedo: boolean;
}

export const ManifestEditsContext = createContext<ManifestEdits | null>(null);

/** The editor's edits API; only inside ManifestEditor. */
export function useManifestEdits(): ManifestEdits {
  const edits = useContext(ManifestEditsContext);
  if (!edits) throw new Error("useManifestEdits is used outside the manifest editor");
  return edits;
}
