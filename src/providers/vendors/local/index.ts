import { LOCAL_MODEL, LocalProvider } from "../../local";
import type { VendorDescriptor } from "../descriptor";

/**
 * Type `local`: the offline engine (offline-engine/) in the gateway's own process, as a route
 * entry (providers/local.ts: the fallback loop and the CLI use it too). Every gateway has one
 * named after its type (`always`).
 */
export const local: VendorDescriptor = {
  type: "local",
  baseUrl: { required: false },
  always: true,
  models: { function: LOCAL_MODEL },
  catalog: "engine",
  genAiSystem: "textai.offline",
  build: (config) => new LocalProvider(config.name),
};
