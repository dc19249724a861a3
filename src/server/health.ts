// GET /health: the process is alive, and which store schema version it serves. The body's shape is
// src/model/probes.ts's Health; encodeHealth builds it.
import type { Health } from '../model/probes.js';

export function encodeHealth(storeVersion: number): Buffer {
  const body: Health = { status: 'ok', storeVersion };
  return Buffer.from(JSON.stringify(body));
}
