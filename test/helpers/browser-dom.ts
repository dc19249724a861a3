// A DOM for unit tests of the console's browser modules (src/web-console/browser/), in the test's own
// Node process: happy-dom's window, its globals (document, location, HTMLElement, ...) made global as a
// page's are. Import this module before any browser module: some of them listen on `document` as they
// load (unsaved-edits.ts), and ES modules run in the order they are imported. The Chromium tests
// (../web-console/*.test.ts) remain the proof of the pages in a real browser against a real server.
import { GlobalRegistrator } from '@happy-dom/global-registrator';

/** The console's page, where the server serves it: the modules read location.hash and call /console/api. */
export const kConsoleUrl = 'http://127.0.0.1:8080/console/';

GlobalRegistrator.register({ url: kConsoleUrl });
// The page's skeleton as the server sends it (assets.ts kPage): the modules draw into #page and #status.
document.body.innerHTML =
  '<header class="top"><nav id="account"></nav></header><main id="main"><p id="status" class="status"></p><div id="page"></div></main>';

/** One answer a stubbed fetch gives: the status and JSON body of the console API's answer. */
export interface StubAnswer {
  status: number;
  body: unknown;
}

/** A request the page made, with the means to answer it when the test chooses. */
export interface HeldRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | null;
  answer(reply: StubAnswer): void;
}

/**
 * Replaces fetch with one that holds each request until the test answers it, so a test decides the order
 * answers arrive in. It honours the request's AbortSignal as a browser does: an aborted request rejects
 * with an AbortError DOMException, and a late answer to it is dropped.
 */
export function holdRequests(): HeldRequest[] {
  const held: HeldRequest[] = [];
  globalThis.fetch = ((input: string | URL | Request, init: RequestInit = {}) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init.signal ?? null;
      const aborted = () => reject(new DOMException('The operation was aborted.', 'AbortError'));
      if (signal?.aborted) return aborted();
      signal?.addEventListener('abort', aborted);
      held.push({
        url: String(input),
        method: init.method ?? 'GET',
        headers: { ...(init.headers as Record<string, string> | undefined) },
        body: typeof init.body === 'string' ? init.body : null,
        answer: ({ status, body }) => {
          if (signal?.aborted) return;
          resolve(new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } }));
        },
      });
    })) as typeof fetch;
  return held;
}

/** Lets every pending promise callback run (a page's awaits after its answers). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}
