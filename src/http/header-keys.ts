// Request header names as uWS's req.getHeader reads them fastest: as bytes. uWS.js turns a string
// argument into UTF-8 on every call (V8's String::Utf8Value: a length pass, an allocation, a copy and a
// free), and reads a Buffer's bytes where they are. On the routes every evaluation passes (the framing
// check, the evaluation route sets' handlers) that is a few look-ups per request, each cheaper as bytes
// (bench/RESULTS.md, Costs behind the code's choices). Elsewhere a string reads better and costs nothing
// that matters.

/** `lowerCaseName` (uWS matches names in lower case) as bytes for req.getHeader, made once at load. */
export function headerKey(lowerCaseName: string): Buffer {
  return Buffer.from(lowerCaseName, 'latin1');
}

export const kContentLengthKey = headerKey('content-length');
export const kTransferEncodingKey = headerKey('transfer-encoding');
export const kIfNoneMatchKey = headerKey('if-none-match');
export const kAuthorizationKey = headerKey('authorization');
