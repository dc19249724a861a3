// GET /health: the process is alive, and which store schema version it serves. Health is the body's
// shape (the OpenAPI document's schema, src/openapi/document.ts); encodeHealth builds it.
import { Type, type Static } from '@sinclair/typebox';

export const Health = Type.Object({ status: Type.Literal('ok'), storeVersion: Type.Integer() });
export type Health = Static<typeof Health>;

export function encodeHealth(storeVersion: number): Buffer {
  const body: Health = { status: 'ok', storeVersion };
  return Buffer.from(JSON.stringify(body));
}
