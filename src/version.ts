import pkg from "../package.json" with { type: "json" };

/** The gateway's version (package.json's), shown on `/` and in the start-up banner; built into the binary. */
export const VERSION: string = pkg.version;
