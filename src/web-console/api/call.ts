// What every console API route is: its call (the request's values, the user, the store, the writer),
// its table entry, and the reading of the console's own form bodies.
import type { Config } from '../../config.js';
import { FlagwireError } from '../../errors.js';
import type { User } from '../../model/accounts.js';
import type { ReceivedBody } from '../../model/request-body.js';
import type { Session } from '../../model/sessions.js';
import type { StoreReader } from '../../store/interfaces.js';
import type { WriterClient } from '../../writer/client.js';

/** What a handler gets: the request's values (read before any await), the user and the store. */
export interface ApiCall {
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The body as received (POST, PATCH), for the writer to parse with the API's rules. */
  received: ReceivedBody | null;
  user: User;
  session: Session;
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

/** A JSON object body parsed for the console's own forms (not flag bodies: those go to the writer as received). */
export function form(call: ApiCall): Record<string, unknown> {
  const bytes = call.received?.bytes;
  let value: unknown;
  try {
    value = bytes === undefined || bytes.length === 0 ? undefined : JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    value = undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new FlagwireError('INVALID_REQUEST', 'The request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}

/** A body the route may go without (an empty one reads as {}); anything sent must be a JSON object. */
export function optionalForm(call: ApiCall): Record<string, unknown> {
  return call.received === null || call.received.bytes.length === 0 ? {} : form(call);
}

export function text(body: Record<string, unknown>, key: string): string {
  const value = body[key];
  if (typeof value !== 'string') throw new FlagwireError('INVALID_REQUEST', `"${key}" must be a string`);
  return value;
}

export function texts(body: Record<string, unknown>, key: string): string[] {
  const value = body[key];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw new FlagwireError('INVALID_REQUEST', `"${key}" must be an array of strings`);
  return value as string[];
}

/** The console's own address, for links in mail: under the configured base URL, whoever asked. */
export function consoleUrl(call: ApiCall): string {
  return new URL('/console/', call.config.baseUrl).href;
}

export function requireReceived(call: ApiCall): ReceivedBody {
  return call.received ?? { bytes: new Uint8Array(0), contentType: 'application/json' };
}
