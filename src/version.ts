// only `version` is imported: the bundler inlines it, so the binary holds no other field of package.json
import { version } from "../package.json";

/** The gateway's version (package.json's), shown on `/` and in the start-up banner; built into the binary. */
export const VERSION: string = version;
