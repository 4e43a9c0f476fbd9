/** chrono-node, the date parser (about 15 MB and 60 ms to load): loaded by the first date lookup. */
import type * as Chrono from "chrono-node";
import { lazyEngine } from "./engines";

export const chrono = lazyEngine("dates", () => require("chrono-node") as typeof Chrono);
