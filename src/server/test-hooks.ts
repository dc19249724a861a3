// Routes for black-box tests only, registered when FLAGWIRE_TEST_HOOKS=1 (never in production):
// move the clock forward instead of sleeping through a 60 s window or 24 hours, and flush token
// activity now instead of waiting for the next interval.
import type { TemplatedApp } from 'uWebSockets.js';
import type { ActivityRecorder } from '../api/activity.js';
import type { Clock } from '../clock.js';
import { sendJson, trackAbort } from '../http/http.js';
import type { RegisteredRoute } from './route-recorder.js';

export function registerTestHooks(
  app: TemplatedApp, deps: { clock: Clock; activity: ActivityRecorder; routes?: () => readonly RegisteredRoute[] },
): void {
  // Every (method, pattern) registered on the app: the OpenAPI test checks each is documented.
  app.get('/__test/routes', (res) => sendJson(res, 200, deps.routes?.() ?? []));
  app.post('/__test/clock', (res, req) => {
    const seconds = Number(new URLSearchParams(req.getQuery() ?? '').get('advance'));
    if (Number.isInteger(seconds)) deps.clock.advance(seconds);
    sendJson(res, 200, { now: deps.clock.now() });
  });
  app.post('/__test/flush', (res) => {
    trackAbort(res);
    void deps.activity.flush().then(() => sendJson(res, 200, { flushed: true }));
  });
}
