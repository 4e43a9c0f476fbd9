import type { VendorDescriptor } from "../descriptor";
import { MOCK_IMAGE_MODEL, MOCK_MODEL, MockProvider } from "./provider";

/** Type `mock` (CONTRACT section 9): synthetic, schema-valid answers for load tests; no upstream. */
export const mock: VendorDescriptor = {
  type: "mock",
  baseUrl: { required: false },
  models: { function: MOCK_MODEL, image: MOCK_IMAGE_MODEL },
  catalog: "operator",
  build: (config) => new MockProvider(config),
};
