/**
 * The sizes OpenAI's image API accepts, per model family (first matching prefix wins). Any other
 * size is a 400 from the API, so the gateway sends the accepted size nearest to the one asked for.
 */
export const GPT_IMAGE_SIZES: readonly string[] = ["1024x1024", "1536x1024", "1024x1536"];
const OPENAI_IMAGE_SIZES: readonly { prefix: string; sizes: readonly string[] }[] = [
  { prefix: "dall-e-2", sizes: ["256x256", "512x512", "1024x1024"] },
  { prefix: "dall-e-3", sizes: ["1024x1024", "1792x1024", "1024x1792"] },
  { prefix: "gpt-image", sizes: GPT_IMAGE_SIZES },
];

/**
 * The sizes a provider accepts for `model`: a known family's, else `otherModels`, the vendor's own
 * rule (its descriptor's `imageSizes`: OpenAI's API takes the gpt-image sizes for another model),
 * or undefined when any size goes (a self-hosted server with a model that is not one of OpenAI's).
 */
export function acceptedImageSizes(otherModels: readonly string[] | undefined, model: string): readonly string[] | undefined {
  const known = OPENAI_IMAGE_SIZES.find((f) => model.toLowerCase().startsWith(f.prefix));
  return known ? known.sizes : otherModels;
}

function sides(size: string): [number, number] {
  const [w, h] = size.split("x").map(Number);
  return [w ?? 0, h ?? 0];
}

/**
 * The accepted size nearest to `size`: first in aspect ratio (distance of log(width/height), so
 * 2:1 and 1:2 are as far from square), then in area (log of the area ratio). Ties keep list order.
 */
export function nearestImageSize(size: string, accepted: readonly string[]): string {
  const [w, h] = sides(size);
  if (!(w > 0 && h > 0) || accepted.length === 0) return accepted[0] ?? size;
  const ratio = Math.log(w / h);
  const area = Math.log(w * h);
  let best = accepted[0] as string;
  let bestKey: [number, number] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
  for (const candidate of accepted) {
    const [cw, ch] = sides(candidate);
    const key: [number, number] = [Math.abs(Math.log(cw / ch) - ratio), Math.abs(Math.log(cw * ch) - area)];
    const closer = key[0] < bestKey[0] - 1e-9 || (Math.abs(key[0] - bestKey[0]) <= 1e-9 && key[1] < bestKey[1] - 1e-9);
    if (closer) {
      best = candidate;
      bestKey = key;
    }
  }
  return best;
}

/** The size to send: `size` itself when the provider takes any size or accepts it, else the nearest accepted one. */
export function imageSizeFor(otherModels: readonly string[] | undefined, model: string, size: string): string {
  const accepted = acceptedImageSizes(otherModels, model);
  if (!accepted || accepted.includes(size)) return size;
  return nearestImageSize(size, accepted);
}
