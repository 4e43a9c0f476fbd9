/**
 * chrono-node's English parser, the date parser (about 10 MB and 40 to 160 ms to load): its
 * modules are required one a step by warmEngines() after the listener is up, or all at once by
 * the first date lookup that comes before (engines.ts). `chrono-node/en` is what the package's
 * own `parse` and `parseDate` call (its casual English parser) without the 14 other languages'
 * parsers, which took most of the package's load (about 1 s on a busy machine).
 */
import type * as ChronoEn from "chrono-node/en";
import { requireInSteps, slicedEngine } from "./engines";

export const chrono = slicedEngine("dates", function* () {
  let entry: string | null = null;
  try {
    entry = require.resolve("chrono-node/en");
  } catch {
    // inside a compiled binary: the require below loads it in one step
  }
  if (entry) yield* requireInSteps(entry);
  return require("chrono-node/en") as typeof ChronoEn;
});
