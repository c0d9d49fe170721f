/** One printed figure against its target: `label  value (target ...)  met|missed`. */

export interface TargetFigure {
  label: string;
  /** The measured value as printed (with its unit). */
  value: string;
  /** The target as printed, e.g. `>= 1.0` or `<= node-http-proxy's 0.12 ms`. */
  target: string;
  met: boolean;
}

/** Prints each figure on its own line and returns them as `{ label: "value (target) met" }`. */
export function printTargets(title: string, figures: TargetFigure[]): Record<string, string> {
  console.log(`\n${title} against the targets:`);
  const out: Record<string, string> = {};
  for (const f of figures) {
    const verdict = f.met ? "met" : "MISSED";
    console.log(`  ${f.label.padEnd(58)} ${f.value.padStart(14)}   target ${f.target.padEnd(28)} ${verdict}`);
    out[f.label] = `${f.value} (target ${f.target}) ${verdict}`;
  }
  return out;
}
