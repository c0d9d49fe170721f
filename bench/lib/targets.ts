/**
 * The targets a benchmark figure is held to: each case records its figures here with their
 * target, prints them as `met` or `missed` at once, and `npm run bench` prints every recorded
 * figure again at the end of the run, so one screen says where the gateway stands.
 */

/** One figure checked against its target. */
export interface TargetCheck {
  /** The bench case that measured it. */
  bench: string;
  figure: string;
  measured: number;
  unit: string;
  /** `>=` or `<=` the goal; `report` when there is no goal, only a figure to print. */
  op: ">=" | "<=" | "report";
  goal?: number;
  met?: boolean;
}

const recorded: TargetCheck[] = [];

function line(check: TargetCheck): string {
  const value = `${check.measured}${check.unit}`;
  const target = check.op === "report" ? "(reported)" : `target ${check.op} ${check.goal}${check.unit}`;
  const verdict = check.op === "report" ? "" : check.met ? "met" : "MISSED";
  return `  ${check.figure.padEnd(58)} ${value.padStart(10)}   ${target.padEnd(20)} ${verdict}`;
}

/** Records and prints `figure` of `bench` with its target (`op` and `goal`); returns whether it was met. */
export function checkTarget(
  bench: string,
  figure: string,
  measured: number,
  op: TargetCheck["op"],
  goal?: number,
  unit = "",
): boolean {
  const met = op === "report" || goal === undefined ? undefined : op === ">=" ? measured >= goal : measured <= goal;
  const check: TargetCheck = { bench, figure, measured, unit, op, goal, met };
  recorded.push(check);
  console.log(line(check));
  return met ?? true;
}

/** Every figure recorded so far in this run. */
export function recordedTargets(): readonly TargetCheck[] {
  return recorded;
}

/** Prints every recorded figure, grouped by case, with met/missed and the count of misses. */
export function printTargetSummary(): void {
  if (recorded.length === 0) return;
  console.log("\n=== targets");
  let bench = "";
  for (const check of recorded) {
    if (check.bench !== bench) {
      bench = check.bench;
      console.log(bench);
    }
    console.log(line(check));
  }
  const checked = recorded.filter((c) => c.op !== "report");
  console.log(`${checked.filter((c) => c.met).length} of ${checked.length} targets met`);
}
