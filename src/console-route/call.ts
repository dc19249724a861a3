// What every console API route is: its call (the request's values, the user, the store, the writer)
// and its table entry. The console's form bodies are read by forms.ts.
import type { Principal } from '../actor/audit-actor.js';
import type { Config } from '../config.js';
import type { User } from '../model/accounts.js';
import type { ReceivedBody } from '../model/request-body.js';
import type { Session } from '../model/sessions.js';
import type { StoreReader } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';

/** What a handler gets: the request's values (read before any await), the user and the store. */
export interface ApiCall {
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The body as received (POST, PATCH), for the writer to parse with the API's rules. */
  received: ReceivedBody | null;
  /** The If-Match header ('' when absent). */
  ifMatch: string;
  user: User;
  session: Session;
  /** Who the user acts as: every change a route asks of the writer names it (sessionPrincipal). */
  principal: Principal;
  /** The store as the user may see it: confined to one organisation for a single sign-on session (org-scope.ts). */
  store: StoreReader;
  writer: WriterClient;
  /**
   * The server's settings a route needs: a webhook's URL is checked against FLAGWIRE_WEBHOOK_ALLOW, an
   * invitation's mail links to the base URL, organisations are made where FLAGWIRE_CONSOLE_CREATE_ORGS allows.
   */
  config: Readonly<Pick<Config, 'webhookAllow' | 'prometheusMetrics' | 'baseUrl' | 'consoleCreateOrgs'>>;
  now: number;
}

export interface ApiRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Segments after /console/api/; `:name` matches one segment. */
  pattern: string;
  run(call: ApiCall): unknown;
}

/** The console's own address, for links in mail: under the configured base URL, whoever asked. */
export function consoleUrl(call: ApiCall): string {
  return new URL('/console/', call.config.baseUrl).href;
}

export function requireReceived(call: ApiCall): ReceivedBody {
  return call.received ?? { bytes: new Uint8Array(0), contentType: 'application/json' };
}

/** The principal a console session acts as: its person, confined to the organisation whose identity provider signed them in. */
export function sessionPrincipal(session: Session): Principal {
  return session.orgId === undefined
    ? { kind: 'user', userId: session.userId }
    : { kind: 'user', userId: session.userId, viaOrgId: session.orgId };
}
