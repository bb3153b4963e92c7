import { type CompiledFormula, compileFormula } from "./compile";
import { FormulaError, type FormulaNode, formulaFields, parseFormula } from "./parse";
import { type ChunkEvaluator, applyVectorSteps, compileNodeVector } from "./vector";

export interface FormulaMetricSource {
  id: string;
  expression: string;
}

export interface FormulaPlanError {
  metricId: string;
  /** 0-based offset into the metric's expression. */
  position: number;
  message: string;
}

export interface FormulaStep {
  id: string;
  /** One row at a time (the reference semantics). */
  evaluate: CompiledFormula;
  /** A chunk of rows at a time over typed columns (what applyFormulaSteps runs). */
  evaluateChunk: ChunkEvaluator;
}

/**
 * Orders formula metrics so each runs after the metrics it reads (a share after its
 * sum), and compiles them. `baseFields` are the columns the query itself returns
 * (dimensions and sql metrics). Unknown ids, syntax errors and cycles are all
 * reported, each with the metric and a position in its expression.
 */
export function planFormulaMetrics(
  metrics: readonly FormulaMetricSource[],
  baseFields: ReadonlySet<string>,
): { steps: FormulaStep[]; errors: FormulaPlanError[] } {
  const errors: FormulaPlanError[] = [];
  const trees = new Map<string, FormulaNode>();
  for (const metric of metrics) {
    try {
      trees.set(metric.id, parseFormula(metric.expression));
    } catch (error) {
      errors.push(toPlanError(metric.id, error));
    }
  }
  const formulaIds = new Set(metrics.map((m) => m.id));
  const known = (name: string) => baseFields.has(name) || formulaIds.has(name);

  const steps: FormulaStep[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (id: string, trail: string[]): boolean => {
    const seen = state.get(id);
    if (seen === "done") return true;
    const tree = trees.get(id);
    if (seen === "visiting") {
      const cycle = [...trail.slice(trail.indexOf(id)), id];
      errors.push({ metricId: id, position: tree ? (formulaFields(tree).get(trail[trail.indexOf(id) + 1] ?? id) ?? 0) : 0, message: `metrics depend on each other in a cycle: ${cycle.join(" -> ")}` });
      return false;
    }
    if (!tree) return false;
    state.set(id, "visiting");
    let ok = true;
    for (const [name, at] of formulaFields(tree)) {
      if (!known(name)) {
        errors.push({ metricId: id, position: at, message: `unknown field '${name}'` });
        ok = false;
      } else if (formulaIds.has(name)) {
        ok = visit(name, [...trail, id]) && ok;
      }
    }
    state.set(id, "done");
    if (ok) steps.push({ id, evaluate: compileFormula(tree, known), evaluateChunk: compileNodeVector(tree, known) });
    return ok;
  };
  for (const metric of metrics) visit(metric.id, []);
  return { steps, errors: dedupe(errors) };
}

/** Adds each formula metric to every row, in plan order (rows are the caller's own objects). */
export function applyFormulaSteps(rows: Record<string, unknown>[], steps: readonly FormulaStep[]): void {
  if (steps.length === 0) return;
  applyVectorSteps(rows, steps);
}

function toPlanError(metricId: string, error: unknown): FormulaPlanError {
  if (error instanceof FormulaError) return { metricId, position: error.position, message: error.reason };
  throw error;
}

// A cycle is found once from each of its members; keep one report per metric and message.
function dedupe(errors: FormulaPlanError[]): FormulaPlanError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.metricId}\u0000${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
