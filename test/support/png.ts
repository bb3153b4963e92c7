import zlib from "node:zlib";

/**
 * A PNG (8-bit RGB or RGBA, not interlaced, as resvg writes them) decoded to its pixels' grey
 * levels, for tests that check an image is not blank: enough of the format for that, no more.
 */
export function pngGreys(bytes: Uint8Array): { width: number; height: number; greys: Float64Array } {
  const buffer = Buffer.from(bytes);
  if (buffer.readUInt32BE(0) !== 0x89504e47) throw new Error("not a PNG");
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  while (offset < buffer.length) {
    const length = buffer.readUInt32BE(offset);
    const type = buffer.toString("latin1", offset + 4, offset + 8);
    const chunk = buffer.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = chunk.readUInt32BE(0);
      height = chunk.readUInt32BE(4);
      const [depth, colour, , , interlace] = chunk.subarray(8, 13);
      channels = colour === 6 ? 4 : colour === 2 ? 3 : 0;
      if (depth !== 8 || channels === 0 || interlace !== 0) throw new Error(`unsupported PNG (depth ${depth}, colour ${colour}, interlace ${interlace})`);
    } else if (type === "IDAT") data.push(chunk);
    offset += 12 + length;
  }
  const raw = zlib.inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter];
      pixels[y * stride + x] = (line[x] + predictor) & 0xff;
    }
  }
  const greys = new Float64Array(width * height);
  for (let i = 0; i < width * height; i++) greys[i] = (pixels[i * channels] + pixels[i * channels + 1] + pixels[i * channels + 2]) / 3;
  return { width, height, greys };
}

/** The variance of the grey levels in a rectangle (all of the image by default): 0 for a blank one. */
export function greyVariance(image: ReturnType<typeof pngGreys>, box = { x: 0, y: 0, w: image.width, h: image.height }): number {
  let sum = 0;
  let squares = 0;
  let n = 0;
  for (let y = box.y; y < Math.min(image.height, box.y + box.h); y++) {
    for (let x = box.x; x < Math.min(image.width, box.x + box.w); x++) {
      const g = image.greys[y * image.width + x];
      sum += g;
      squares += g * g;
      n++;
    }
  }
  return n === 0 ? 0 : squares / n - (sum / n) ** 2;
}
