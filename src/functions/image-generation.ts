import { type Static, Type } from "@sinclair/typebox";
import { invalidRequest } from "../errors";
import { defineFunction } from "./define";
import { Enum, Model, Result, Text } from "./schemas";

export const ASPECT_RATIOS = ["1:1", "16:9", "9:16", "4:3", "3:2"] as const;
export const IMAGE_STYLES = ["photorealistic", "digital_art", "vector", "3d_render", "cinematic"] as const;
type AspectRatio = (typeof ASPECT_RATIOS)[number];
type ImageStyle = (typeof IMAGE_STYLES)[number];

/**
 * Exact ratios on a 16-pixel grid near one megapixel: the size asked of the provider. A provider
 * with a fixed list of sizes (OpenAI's image models) gets the nearest one it accepts instead
 * (providers/image-sizes.ts), and the result's `size` reports what was generated.
 */
export const SIZE_FOR_RATIO: Record<AspectRatio, string> = {
  "1:1": "1024x1024",
  "16:9": "1792x1008",
  "9:16": "1008x1792",
  "4:3": "1152x864",
  "3:2": "1536x1024",
};

const STYLE_WORDS: Record<ImageStyle, string> = {
  photorealistic: "photorealistic photograph, natural lighting, fine detail",
  digital_art: "digital art illustration, rich colours",
  vector: "flat vector illustration, clean shapes, limited palette",
  "3d_render": "3D render, soft global illumination, studio quality",
  cinematic: "cinematic film still, dramatic lighting, shallow depth of field",
};

const MIN_SIDE = 64;
const MAX_SIDE = 4096;

const request = Type.Object({
  prompt: Text("description of the scene"),
  size: Type.Optional(
    Type.String({
      pattern: "^[0-9]{2,4}x[0-9]{2,4}$",
      description:
        "WIDTHxHEIGHT in pixels, e.g. 1024x1024; wins over aspect_ratio; snapped to the nearest size the model accepts",
    }),
  ),
  aspect_ratio: Type.Optional(Enum(ASPECT_RATIOS, "shape of the image when size is not given; default 1:1")),
  style: Type.Optional(Enum(IMAGE_STYLES, "visual style; default photorealistic")),
  negative_prompt: Type.Optional(Type.String({ maxLength: 2000, description: "elements to exclude" })),
  model: Model(),
});
type Req = Static<typeof request>;

const Format = Enum(["png", "webp", "jpeg"], "image file format");
const result = Result(
  {
    images: Type.Array(
      Type.Union([
        Type.Object(
          { url: Type.String({ description: "where to download the image" }), format: Format },
          { additionalProperties: false },
        ),
        Type.Object(
          { b64_json: Type.String({ description: "the image file, base64-encoded" }), format: Format },
          {
            additionalProperties: false,
          },
        ),
      ]),
      { minItems: 1, description: "the generated images, each as a URL or as base64 data" },
    ),
    size: Type.String({ description: "WIDTHxHEIGHT of the images as generated (may differ from the size asked for)" }),
  },
  "generated images",
);

/** Both variants become `size` + `style`; aspect_ratio is folded into size. */
function normalize(req: Req): Req {
  const { aspect_ratio, ...rest } = req;
  const style = req.style ?? "photorealistic";
  if (req.size === undefined) return { ...rest, style, size: SIZE_FOR_RATIO[aspect_ratio ?? "1:1"] };
  const [width, height] = req.size.split("x").map(Number);
  if ([width, height].some((side) => side < MIN_SIDE || side > MAX_SIDE)) {
    throw invalidRequest(`size: each side must be between ${MIN_SIDE} and ${MAX_SIDE} pixels`, "size");
  }
  return { ...rest, style };
}

/** The image API takes one text: the scene, the style words and what to leave out. */
function imagePrompt(req: Req): string {
  const parts = [req.prompt.trim(), `Style: ${STYLE_WORDS[req.style ?? "photorealistic"]}.`];
  if (req.negative_prompt) parts.push(`Avoid: ${req.negative_prompt}.`);
  return parts.join("\n");
}

type Res = Static<typeof result>;

/** Keeps one of url / b64_json per image (an SDK may send both keys, one empty); size is the one the provider sent, else the request's. */
function postprocess(req: Req, res: Res): Res {
  const images = res.images.map((img) => {
    const url = "url" in img ? img.url : undefined;
    if (url) return { url, format: img.format };
    return { b64_json: "b64_json" in img ? img.b64_json : "", format: img.format };
  });
  return { images, size: res.size || req.size || SIZE_FOR_RATIO[req.aspect_ratio ?? "1:1"] };
}

export default defineFunction({
  name: "image-generation",
  summary: "Generate an image from a text description",
  description:
    "The prompt is one user message: the text sent to the provider's image API, with the style and exclusions folded in.",
  tags: ["generation"],
  kind: "image",
  request,
  result,
  cost: 5,
  normalize,
  postprocess,
  prompt: (req) => [{ role: "user", content: imagePrompt(req) }],
  example: {
    request: {
      prompt: "A lighthouse on a cliff at sunset",
      aspect_ratio: "16:9",
      style: "cinematic",
      negative_prompt: "people, text",
    },
    result: { images: [{ url: "https://images.example.com/3f9c2d.webp", format: "webp" }], size: "1536x1024" },
  },
});
