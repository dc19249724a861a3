// The icon a browser asks for at /favicon.ico on every page it shows of this origin: a 16 x 16 ICO (one
// 32-bit BMP image), drawn below and encoded once at load, so the console's tab shows Flagwire's flag
// instead of a 404 in the browser's log.
//
// ICO file:  ICONDIR (6 bytes) | ICONDIRENTRY (16) | BITMAPINFOHEADER (40) | BGRA pixels, bottom row
//            first (16 x 16 x 4) | AND mask (16 rows of 32 bits; zero: the alpha channel decides)
const kArt = [
  '................',
  '.BBBBBBBBBBBBBB.',
  '.BBBBBBBBBBBBBB.',
  '.BBWWWWWWWWWBBB.',
  '.BBWWWWWWWWWWBB.',
  '.BBWWWWWWWWWBBB.',
  '.BBWWWWWWWWWWBB.',
  '.BBWBBBBBBBBBBB.',
  '.BBWBBBBBBBBBBB.',
  '.BBWBBBBBBBBBBB.',
  '.BBWBBBBBBBBBBB.',
  '.BBWBBBBBBBBBBB.',
  '.BBWBBBBBBBBBBB.',
  '.BBWBBBBBBBBBBB.',
  '.BBBBBBBBBBBBBB.',
  '................',
];
/** BGRA: the console's accent (#0b5cad), white, and transparent. */
const kColours: Readonly<Record<string, readonly [number, number, number, number]>> = {
  B: [0xad, 0x5c, 0x0b, 0xff],
  W: [0xff, 0xff, 0xff, 0xff],
  '.': [0, 0, 0, 0],
};

function encodeIcon(): Buffer {
  const size = kArt.length;
  const pixelBytes = size * size * 4;
  const maskBytes = size * 4;
  const imageBytes = 40 + pixelBytes + maskBytes;
  const ico = Buffer.alloc(6 + 16 + imageBytes);
  ico.writeUInt16LE(1, 2); // type: icon
  ico.writeUInt16LE(1, 4); // one image
  ico.writeUInt8(size, 6);
  ico.writeUInt8(size, 7);
  ico.writeUInt16LE(1, 10); // colour planes
  ico.writeUInt16LE(32, 12); // bits per pixel
  ico.writeUInt32LE(imageBytes, 14);
  ico.writeUInt32LE(22, 18); // where the image starts
  ico.writeUInt32LE(40, 22);
  ico.writeInt32LE(size, 26);
  ico.writeInt32LE(size * 2, 30); // an icon's BMP counts the AND mask's rows too
  ico.writeUInt16LE(1, 34);
  ico.writeUInt16LE(32, 36);
  ico.writeUInt32LE(pixelBytes + maskBytes, 42);
  let at = 62;
  for (const row of [...kArt].reverse()) {
    for (const cell of row) {
      for (const byte of kColours[cell]!) ico.writeUInt8(byte, at++);
    }
  }
  return ico;
}

export const kFavicon = encodeIcon();
