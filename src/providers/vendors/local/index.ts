import { LOCAL_MODEL, LocalProvider } from "../../local";
import type { VendorDescriptor } from "../descriptor";

/**
 * Type `local`: the offline engine (offline-engine/) in the gateway's own process, as a route
 * entry (providers/local.ts: the fallback loop and the CLI use it too). A gateway always has one
 * named "local" (config.ts adds it).
 */
export const local: VendorDescriptor = {
  type: "local",
  baseUrl: { required: false },
  models: { function: LOCAL_MODEL },
  catalog: "engine",
  genAiSystem: "textai.offline",
  build: (config) => new LocalProvider(config.name),
};
