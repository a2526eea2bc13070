// Small test images, made with sharp: one colour, or two colours in bands (a "mostly red" image),
// encoded as PNG or JPEG, and as the data: URLs chat requests carry.
import sharp from "sharp";

export type Rgb = readonly [red: number, green: number, blue: number];

export const RED: Rgb = [255, 0, 0];
export const BLUE: Rgb = [0, 0, 255];
export const GREEN: Rgb = [0, 255, 0];

/** A `width`×`height` image whose top `share` of rows is `top` and the rest `bottom`. */
export async function bandsImage(
  width: number,
  height: number,
  top: Rgb,
  bottom: Rgb,
  share: number,
  format: "png" | "jpeg" = "png",
): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    const colour = y < share * height ? top : bottom;
    for (let x = 0; x < width; x++) pixels.set(colour, (y * width + x) * 3);
  }
  const image = sharp(pixels, { raw: { width, height, channels: 3 } });
  return format === "png" ? image.png().toBuffer() : image.jpeg().toBuffer();
}

/** A square PNG of one colour. */
export const solidPng = (colour: Rgb, size = 64): Promise<Buffer> => bandsImage(size, size, colour, colour, 1);

/** The image as a data: URL. */
export const dataUrl = (image: Buffer, mime = "image/png"): string => `data:${mime};base64,${image.toString("base64")}`;
