import { FormatRegistry } from "@sinclair/typebox";

/**
 * TypeBox rejects every string with a `format` it does not know, so a result schema using
 * `format: "date-time"` would fail validation for every provider. Registers the common formats
 * unless someone (the app) registered its own first.
 */
const FORMATS: Record<string, (v: string) => boolean> = {
  "date-time": (v) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/.test(v) && !Number.isNaN(Date.parse(v)),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)),
  time: (v) => /^\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/.test(v),
  email: (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v),
  uri: (v) => /^[a-z][a-z0-9+.-]*:\S+$/i.test(v),
  url: (v) => /^https?:\/\/\S+$/i.test(v),
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
  ipv4: (v) => /^(\d{1,3}\.){3}\d{1,3}$/.test(v) && v.split(".").every((p) => Number(p) <= 255),
};

export function ensureFormats(): void {
  for (const [name, check] of Object.entries(FORMATS)) if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, check);
}
