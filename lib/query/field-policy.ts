import type { Role } from "@/lib/access/roles";
import type { Dataset, FieldAccess } from "@/lib/manifest/schema";
import { formulaFields, parseFormula } from "./formula/parse";

/**
 * Field policies (issue 48 §4, docs/datasets.md "Field policies"): which of a dataset's dimensions and
 * metrics one viewer sees as they are, sees masked, or does not see at all. Decided here once per
 * widget plan (lib/query/run.ts), so every surface that plans a widget (pages, the API, embeds,
 * reports, alerts, exports) applies the same decision.
 */

/** Who is looking, as far as field policies care: a role (none for embeds and public links) and the member's attributes. */
export interface FieldViewer {
  role: Role | null;
  /** Attribute name -> the values the viewer holds (members' `attributes`, or an embed token's signed claim). */
  attributes: Readonly<Record<string, readonly string[]>>;
}

/** A viewer no role or attribute admits: what a public link reads as. */
export const ANONYMOUS_VIEWER: FieldViewer = Object.freeze({ role: null, attributes: Object.freeze({}) });

export type FieldVisibility =
  | { kind: "visible" }
  | { kind: "masked"; expression: string }
  /** `hidden`: hidden from everyone; `restricted`: the viewer's role or attributes are not admitted (or an input of a formula is not). */
  | { kind: "absent"; reason: "hidden" | "restricted" };

const VISIBLE: FieldVisibility = { kind: "visible" };

/** Whether the viewer holds a role and every attribute the policy asks for (no restriction admits everyone). */
function admits(access: FieldAccess, viewer: FieldViewer): boolean {
  if (access.roles && (viewer.role === null || !access.roles.includes(viewer.role))) return false;
  for (const [name, values] of Object.entries(access.attributes ?? {})) {
    if (!(viewer.attributes[name] ?? []).some((held) => values.includes(held))) return false;
  }
  return true;
}

function ownVisibility(access: FieldAccess | undefined, viewer: FieldViewer): FieldVisibility {
  if (!access) return VISIBLE;
  if (access.hidden) return { kind: "absent", reason: "hidden" };
  const restricted = access.roles !== undefined || access.attributes !== undefined;
  // A mask without roles or attributes masks the field for everyone.
  if (restricted ? admits(access, viewer) : access.mask === undefined) return VISIBLE;
  return access.mask !== undefined ? { kind: "masked", expression: access.mask } : { kind: "absent", reason: "restricted" };
}

/**
 * Each field's visibility to `viewer`, only for fields that are not plainly visible (an empty map: the
 * dataset reads as before). A formula metric is absent when any field it reads, transitively, is absent
 * (lightdash#24709: a derived metric must not reveal what its inputs hide); over a masked input it computes
 * on the mask, which is all that input shows. A formula metric's own mask is not SQL it could select, so a
 * formula the viewer is not admitted to is absent.
 */
export function fieldVisibility(dataset: Dataset, viewer: FieldViewer): ReadonlyMap<string, FieldVisibility> {
  const decided = new Map<string, FieldVisibility>();
  for (const field of [...dataset.dimensions, ...dataset.metrics.filter((m) => m.type === "sql")]) {
    const visibility = ownVisibility(field.access, viewer);
    if (visibility.kind !== "visible") decided.set(field.id, visibility);
  }
  const formulas = new Map(dataset.metrics.filter((m) => m.type === "formula").map((m) => [m.id, m]));
  const inputs = new Map([...formulas].map(([id, m]) => [id, [...formulaFields(parseFormula(m.expression)).keys()]]));
  const settled = new Map<string, FieldVisibility>();
  const formulaVisibility = (id: string, seen: Set<string>): FieldVisibility => {
    const known = settled.get(id);
    if (known) return known;
    const own = ownVisibility(formulas.get(id)!.access, viewer);
    let visibility: FieldVisibility = own.kind === "masked" ? { kind: "absent", reason: "restricted" } : own;
    if (visibility.kind === "visible" && !seen.has(id)) {
      seen.add(id);
      for (const input of inputs.get(id)!) {
        const of = formulas.has(input) ? formulaVisibility(input, seen) : (decided.get(input) ?? VISIBLE);
        if (of.kind === "absent") {
          visibility = of;
          break;
        }
      }
    }
    settled.set(id, visibility);
    return visibility;
  };
  for (const id of formulas.keys()) {
    const visibility = formulaVisibility(id, new Set());
    if (visibility.kind !== "visible") decided.set(id, visibility);
  }
  return decided;
}

/**
 * The dataset as `visibility` shows it: absent fields removed, masked ones selecting their mask. Everything
 * downstream (selection, rollup routing, shared scans, formulas) reads this, so an absent field is never
 * selected (not a NULL column: metabase#48515) and a masked one never reaches a statement as itself; a
 * rollup matches selections by expression, so a masked field is never answered from the original's rollup.
 */
export function viewedDataset(dataset: Dataset, visibility: ReadonlyMap<string, FieldVisibility>): Dataset {
  if (visibility.size === 0) return dataset;
  const shown = <F extends { id: string }>(fields: F[], mask: (field: F, expression: string) => F) =>
    fields.flatMap((field) => {
      const v = visibility.get(field.id);
      if (!v) return [field];
      return v.kind === "masked" ? [mask(field, v.expression)] : [];
    });
  return {
    ...dataset,
    dimensions: shown(dataset.dimensions, (d, expression) => ({ ...d, column: expression })),
    metrics: shown(dataset.metrics, (m, expression) => ({ ...m, expression })),
    order_by: dataset.order_by?.filter((o) => visibility.get(o.column)?.kind !== "absent"),
  };
}

/** What a widget says instead of its data when it needs fields the viewer may not see. */
export function restrictionNotice(fields: readonly { id: string; reason: "hidden" | "restricted" }[]): string {
  const hidden = fields.filter((f) => f.reason === "hidden").map((f) => f.id);
  const restricted = fields.filter((f) => f.reason === "restricted").map((f) => f.id);
  const names = (ids: string[]) => ids.map((id) => `'${id}'`).join(", ");
  const parts = [
    ...(hidden.length > 0 ? [`${names(hidden)} ${hidden.length === 1 ? "is" : "are"} hidden`] : []),
    ...(restricted.length > 0 ? [`${names(restricted)} ${restricted.length === 1 ? "is" : "are"} restricted for your role`] : []),
  ];
  return `This widget needs fields you may not see: ${parts.join("; ")}.`;
}
