// The browser's single sign-on routes (docs/sso.md: The flow), beside the console under /console so
// the session cookie (Path=/console) they set is the console's:
// - GET /console/sso/{orgId}: whether the organisation signs in with single sign-on, and where: the
//   console's sign-in form asks before it sends the browser on, so that an organisation without it is
//   told on the form and not answered with a bare JSON page. It reads only, and says no more than the
//   start route's own 404 does.
// - GET /console/sso/{orgId}/start: counted per client address; a sign-in under way (its state's hash,
//   nonce and PKCE verifier) is sealed into a cookie this browser is given, nothing stored
//   (flow-cookie.ts), and the browser is sent to the identity provider's authorization endpoint.
// - GET /console/sso/callback?code&state: the flow this browser's cookie carries for that state, its
//   state marked used (once, on every node), the code exchanged, the ID token verified, and the person
//   signed in (sso-commands.ts ssoSignIn): a session cookie and a redirect to the console. Every refusal
//   is the spec's envelope, and the state stays used.
import type { HttpRequest } from 'uWebSockets.js';
import type { ServiceRouteDeps, ServiceRouteSpec } from '../capability/capability.js';
import { answerableError, errorEnvelope, FlagwireError } from '../errors.js';
import { type PendingResponse, sendSameOrigin, trackAbort } from '../http/http.js';
import { hashSecret, randomId } from '../model/ids.js';
import { clientAddresses } from '../routes/service-route-parts.js';
import { cookieValue, freshSession, sessionCookie } from '../sessions/session-cookie.js';
import { flowOrgId, openFlow, type SealedFlow, sealFlow } from './flow-cookie.js';
import { OidcProviders, pkcePair } from './oidc.js';
import { kSsoSettingsRecords, type SsoSettings } from './records.js';
import { kFlowMs, kSsoCallbackPath, ssoStartPath } from './sso-commands.js';
import { kSsoCommands } from './command-table.js';

/** The cookie that carries a sign-in under way in the browser that started it: Lax, as the identity provider's redirect back is a cross-site navigation. */
const kFlowCookie = 'flagwire_sso';
const kNoStore = [['Cache-Control', 'no-store']] as const;
/** An organisation id is at most this long; a longer one is not looked up. */
const kMaxIdLength = 64;

export const kSsoRoutes = {
  ssoLookup: {
    method: 'get',
    pattern: '/console/sso/:orgId',
    auth: 'none',
    label: '/console/sso/{orgId}',
    handler: lookupHandler,
  },
  ssoStart: {
    method: 'get',
    pattern: '/console/sso/:orgId/start',
    auth: 'none',
    label: '/console/sso/{orgId}/start',
    handler: startHandler,
  },
  ssoCallback: { method: 'get', pattern: kSsoCallbackPath, auth: 'none', handler: callbackHandler },
} satisfies Record<string, ServiceRouteSpec>;

const kProviders = new WeakMap<ServiceRouteDeps, OidcProviders>();

/** A front-end thread's providers (their discovery documents and keys kept), one for its start and callback routes. */
function providersOf(deps: ServiceRouteDeps): OidcProviders {
  let providers = kProviders.get(deps);
  if (providers === undefined) {
    providers = new OidcProviders({
      clockSkewMs: deps.config.oidcClockSkewMs,
      jwksCooldownMs: deps.config.oidcJwksCooldownMs,
      now: () => deps.clock.now(),
    });
    kProviders.set(deps, providers);
  }
  return providers;
}

/** A route's answer: a redirect (with the cookies it sets), or JSON. */
type Reply = { location: string; cookies: string[] } | { json: unknown };

/** Answers with the reply, or the refusal in the spec's envelope; counted under the route. */
function answering(deps: ServiceRouteDeps, route: number, res: PendingResponse, path: string) {
  return (work: Promise<Reply>) =>
    work.then(
      (reply) => {
        if ('json' in reply) {
          sendSameOrigin(res, 200, JSON.stringify(reply.json), 'application/json', kNoStore);
          deps.metrics?.request(route, 200);
          return;
        }
        sendSameOrigin(res, 302, '', 'text/plain', [
          ['Location', reply.location],
          ...reply.cookies.map((c) => ['Set-Cookie', c] as const),
          ...kNoStore,
        ]);
        deps.metrics?.request(route, 302);
      },
      (err: unknown) => {
        const error = answerableError(err, (e) => deps.log.error({ err: e, path }, 'unexpected error in single sign-on'));
        sendSameOrigin(res, error.status, JSON.stringify(errorEnvelope(error, deps.config.docsUrl)), 'application/json', kNoStore);
        deps.metrics?.request(route, error.status);
      },
    );
}

/** The settings of the organisation the path names (still percent-encoded), read now; refused (404) where it has none. */
function settingsOf(deps: ServiceRouteDeps, encoded: string): SsoSettings {
  deps.store.resetReadTxn();
  const orgId = decoded(encoded);
  const settings = orgId !== null && orgId.length <= kMaxIdLength ? deps.store.getKeyed(kSsoSettingsRecords, orgId) : undefined;
  if (settings === undefined)
    throw new FlagwireError('NOT_FOUND', `Organisation ${orgId ?? encoded} does not sign in with single sign-on.`);
  return settings;
}

const redirectUri = (deps: ServiceRouteDeps) => new URL(kSsoCallbackPath, deps.config.baseUrl).href;
const secure = (deps: ServiceRouteDeps) => deps.config.baseUrl.startsWith('https:');

/** A path segment decoded; null where its percent-encoding is malformed (it names no organisation then: a 404, not a thrown URIError). */
function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function lookupHandler(deps: ServiceRouteDeps, route: number): (res: PendingResponse, req: HttpRequest) => void {
  const lookup = async (encoded: string) => {
    const { orgId } = settingsOf(deps, encoded);
    return { json: { orgId, signInPath: ssoStartPath(orgId) } };
  };
  return (res, req) => {
    const encoded = req.getParameter(0) ?? '';
    trackAbort(res);
    void answering(deps, route, res, '/console/sso')(lookup(encoded));
  };
}

function startHandler(deps: ServiceRouteDeps, route: number): (res: PendingResponse, req: HttpRequest) => void {
  const providers = providersOf(deps);
  const addressOf = clientAddresses(deps.config);
  const start = async (encoded: string, address: string) => {
    // A start costs its starter: counted per address, and nothing stored (its flow is the browser's cookie).
    deps.signInLimits.reserveStart(address, deps.clock.now());
    const settings = settingsOf(deps, encoded);
    const provider = await providers.provider(settings.issuer);
    const state = randomId(43);
    const nonce = randomId(43);
    const { verifier, challenge } = pkcePair();
    const sealed = sealFlow(settings, {
      stateHash: hashSecret(state),
      nonce,
      codeVerifier: verifier,
      expiresAt: deps.clock.now() + kFlowMs,
    });
    const location = providers.authorizationUrl(settings, provider.discovery, { state, nonce, challenge, redirectUri: redirectUri(deps) });
    return { location, cookies: [flowCookie(deps, sealed, kFlowMs / 1000)] };
  };
  return (res, req) => {
    const encoded = req.getParameter(0) ?? '';
    const address = addressOf(res, req);
    trackAbort(res);
    void answering(deps, route, res, '/console/sso/start')(start(encoded, address));
  };
}

/** The cookie that carries a sign-in under way (`value` sealed; '' with 0 to clear it). */
function flowCookie(deps: ServiceRouteDeps, value: string, maxAgeS: number): string {
  return `${kFlowCookie}=${value}; Path=/console/sso; Max-Age=${maxAgeS}; HttpOnly; SameSite=Lax${secure(deps) ? '; Secure' : ''}`;
}

/** The sign-in under way that this browser's cookie carries, for `state`; refused when it carries none, or another. */
function flowOf(deps: ServiceRouteDeps, cookie: string, state: string): SealedFlow {
  const orgId = cookie === '' ? null : flowOrgId(cookie);
  deps.store.resetReadTxn();
  const settings = orgId === null || orgId.length > kMaxIdLength ? undefined : deps.store.getKeyed(kSsoSettingsRecords, orgId);
  const flow = settings === undefined ? null : openFlow(settings, cookie);
  if (flow === null || flow.stateHash !== hashSecret(state))
    throw new FlagwireError(
      'SIGN_IN_FAILED',
      'This sign-in is not one under way in this browser: it was used already, started in another browser (or its cookie was lost), or its organisation changed its single sign-on. Start again.',
    );
  if (flow.expiresAt <= deps.clock.now())
    throw new FlagwireError('SIGN_IN_FAILED', 'This sign-in took too long at the identity provider. Start again.');
  return flow;
}

function callbackHandler(deps: ServiceRouteDeps, route: number): (res: PendingResponse, req: HttpRequest) => void {
  const providers = providersOf(deps);
  const finish = async (query: URLSearchParams, cookie: string) => {
    const state = query.get('state') ?? '';
    if (state === '') throw new FlagwireError('SIGN_IN_FAILED', 'The identity provider sent no state back. Start again.');
    const flow = flowOf(deps, cookie, state);
    // Marked used before the code is used: a state (and so its code) is good once, whatever follows.
    await deps.writer.call(kSsoCommands.ssoStateUse, { stateHash: flow.stateHash, orgId: flow.orgId, expiresAt: flow.expiresAt });
    const error = query.get('error');
    if (error !== null)
      throw new FlagwireError('SIGN_IN_FAILED', `The identity provider did not sign you in (${error}${describe(query)}). Start again.`);
    const code = query.get('code') ?? '';
    if (code === '') throw new FlagwireError('SIGN_IN_FAILED', 'The identity provider sent no code back. Start again.');
    deps.store.resetReadTxn();
    const settings = deps.store.getKeyed(kSsoSettingsRecords, flow.orgId);
    if (settings === undefined)
      throw new FlagwireError('SIGN_IN_FAILED', `Organisation ${flow.orgId} no longer signs in with single sign-on.`);
    const provider = await providers.provider(settings.issuer);
    const idToken = await providers.exchange(settings, provider.discovery, code, flow.codeVerifier, redirectUri(deps));
    const person = await providers.verify(settings, provider, idToken, flow.nonce);
    const now = deps.clock.now();
    const { id, session } = freshSession(now, deps.config.consoleSessionMs);
    await deps.writer.call(kSsoCommands.ssoSignIn, { orgId: flow.orgId, issuer: settings.issuer, ...person, session });
    return { location: '/console/', cookies: [sessionCookie(id, session.expiresAt - now, secure(deps)), flowCookie(deps, '', 0)] };
  };
  return (res, req) => {
    const query = new URLSearchParams(req.getQuery() ?? '');
    const cookie = cookieValue(req.getHeader('cookie'), kFlowCookie) ?? '';
    trackAbort(res);
    void answering(deps, route, res, kSsoCallbackPath)(finish(query, cookie));
  };
}

/** The identity provider's error_description, when it sent one (short, as text only). */
function describe(query: URLSearchParams): string {
  const text = query.get('error_description');
  return text === null ? '' : `: ${text.slice(0, 200)}`;
}
