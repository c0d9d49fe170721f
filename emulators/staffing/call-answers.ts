/**
 * Where a simulated call's answer comes from: a script per candidate id (consumed in order; from
 * options or `POST /_emulator/scripts`), else a seeded pseudo-random draw, so a run with the same
 * seed and calls gives the same answers. Also the Swedish phrases the simulated candidates say.
 */
import type { CallAnswer, Intent } from "./staffing-context.ts";

/** mulberry32: a small, well-distributed 32-bit PRNG. */
function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cumulative weights of unscripted answers. */
const DRAWS: [CallAnswer["intent"], number][] = [
  ["accepted", 0.5],
  ["declined", 0.75],
  ["no_answer", 0.9],
  ["maybe", 1],
];

export const PHRASES: Record<Intent, string> = {
  accepted: "Ja, jag kan ta passet.",
  declined: "Nej tyvärr, jag kan inte den dagen.",
  maybe: "Kanske, jag måste kolla en sak först.",
  wrong_person: "Det är fel person, hen bor inte här.",
  asked_question: "Vilken avdelning gäller det?",
  needs_callback: "Kan ni ringa tillbaka om en timme?",
  unclear: "Hallå? Jag hör dig dåligt.",
  angry_or_sensitive: "Sluta ringa mig hela tiden!",
};

/** The answer source of one emulator. */
export function createCallAnswers(seed: number, script: Record<string, CallAnswer[]> = {}) {
  const random = createRandom(seed);
  const scripts = new Map(Object.entries(script).map(([id, answers]) => [id, [...answers]]));
  return {
    /** Replaces the script of `candidateId`. */
    setScript(candidateId: string, answers: CallAnswer[]) {
      if (scripts.size >= 10_000 && !scripts.has(candidateId)) scripts.delete(scripts.keys().next().value as string);
      scripts.set(candidateId, [...answers]);
    },
    /** The next answer of `candidateId`. */
    next(candidateId: string): Required<Pick<CallAnswer, "intent" | "confidence">> & CallAnswer {
      const scripted = scripts.get(candidateId)?.shift();
      if (scripted) return { confidence: 0.95, ...scripted };
      const draw = random();
      const intent = (DRAWS.find(([, upTo]) => draw < upTo)?.[0] ?? "maybe") as CallAnswer["intent"];
      return { intent, confidence: Math.round((0.75 + random() * 0.24) * 100) / 100 };
    },
  };
}
