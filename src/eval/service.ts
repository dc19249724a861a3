// Placeholder until the evaluation engine lands: every evaluation route answers 503.
import type { TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { InFlight } from '../http/in-flight.js';
import { send, type RouteGroup } from '../http/http.js';

export interface EvaluationOptions {
  config: Readonly<Config>;
  log: Logger;
  inFlight: InFlight;
  clock: Clock;
}

export async function createEvaluation(_options: EvaluationOptions): Promise<RouteGroup> {
  return {
    register(app: TemplatedApp) {
      app.get('/v1/*', (res) => send(res, 503, JSON.stringify({ error: 'Unavailable', detail: 'evaluation is not built yet' })));
    },
    async close() {},
  };
}
