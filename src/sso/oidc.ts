// The OpenID Connect relying party's protocol steps (docs/sso.md: The flow): an identity provider's
// discovery document, read and kept; its signing keys, fetched and kept by `jose` and fetched again when a
// token names a key not among them (a rotation), at most once per cooldown; the authorization request
// with PKCE (S256); the code's exchange at the token endpoint; and the ID token's checks (signature,
// iss, aud, azp, exp and iat within the clock skew, nonce). JWT and JWKS handling is jose's, a
// well-kept library, rather than crypto written here.
import { createHash, randomBytes } from 'node:crypto';
import type * as Jose from 'jose';
import { FlagwireError } from '../errors.js';
import type { SsoSettings } from './records.js';

/** What Flagwire reads of a discovery document (OpenID Connect Discovery 1.0 §3). */
export interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  token_endpoint_auth_methods_supported?: string[];
  code_challenge_methods_supported?: string[];
}

/** What a verified sign-in tells of the person. */
export interface VerifiedPerson {
  subject: string;
  email: string | null;
  name: string | null;
  groups: string[];
}

/** Identity providers kept at once (each its discovery and keys): a bound whatever the organisations configure. */
const kMaxProviders = 1000;
/** A discovery document is read again after this long (a provider may move its endpoints). */
const kDiscoveryMs = 60 * 60 * 1000;
/** Each request to an identity provider gives up after this long. */
const kFetchTimeoutMs = 10_000;
/** An ID token older than this (by its iat) is refused: the code was just exchanged, so its token was just made. */
const kMaxTokenAgeSeconds = 10 * 60;
/** Groups taken from a token at most (each at most 256 characters): the claim is the identity provider's to fill. */
const kMaxGroups = 1000;

let jose: Promise<typeof Jose> | undefined;
/**
 * jose, loaded at a thread's first sign-in: its load is a large part of a thread's start, which every node's start
 * paid (serve's bundle imports it with the routes) though few organisations sign in with SSO.
 */
const joseOnUse = () => (jose ??= import('jose'));

const signInFailed = (detail: string) => new FlagwireError('SIGN_IN_FAILED', detail);

interface Provider {
  discovery: Discovery;
  keys: ReturnType<typeof Jose.createRemoteJWKSet>;
  readAt: number;
}

/** PKCE's verifier (RFC 7636 §4.1: 43 to 128 unreserved characters) and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export class OidcProviders {
  /** By issuer, oldest first: a Map keeps insertion order, so the first is the one dropped at the bound. */
  private readonly providers = new Map<string, Provider>();

  constructor(private readonly options: { clockSkewMs: number; jwksCooldownMs: number; now: () => number }) {}

  /** The issuer's discovery document and keys, read at most once an hour. */
  async provider(issuer: string): Promise<Provider> {
    const kept = this.providers.get(issuer);
    if (kept !== undefined && this.options.now() - kept.readAt < kDiscoveryMs) return kept;
    const discovery = await discover(issuer);
    const { createRemoteJWKSet } = await joseOnUse();
    const provider: Provider = {
      discovery,
      keys: createRemoteJWKSet(new URL(discovery.jwks_uri), {
        cooldownDuration: this.options.jwksCooldownMs,
        timeoutDuration: kFetchTimeoutMs,
      }),
      readAt: this.options.now(),
    };
    this.providers.delete(issuer);
    this.providers.set(issuer, provider);
    if (this.providers.size > kMaxProviders) this.providers.delete(this.providers.keys().next().value!);
    return provider;
  }

  /** Where the browser is sent: the provider's authorization endpoint with the request's parameters. */
  authorizationUrl(
    settings: SsoSettings,
    discovery: Discovery,
    request: { state: string; nonce: string; challenge: string; redirectUri: string },
  ): string {
    const url = new URL(discovery.authorization_endpoint);
    const scope = ['openid', ...settings.scopes.filter((s) => s !== 'openid')].join(' ');
    for (const [key, value] of Object.entries({
      response_type: 'code',
      client_id: settings.clientId,
      redirect_uri: request.redirectUri,
      scope,
      state: request.state,
      nonce: request.nonce,
      code_challenge: request.challenge,
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(key, value);
    return url.href;
  }

  /** The code exchanged for the ID token at the token endpoint, with the client's secret and the PKCE verifier. */
  async exchange(settings: SsoSettings, discovery: Discovery, code: string, verifier: string, redirectUri: string): Promise<string> {
    const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    const methods = discovery.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    if (methods.includes('client_secret_basic')) {
      // RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
      const encode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
      headers.authorization = `Basic ${Buffer.from(`${encode(settings.clientId)}:${encode(settings.clientSecret)}`).toString('base64')}`;
    } else {
      body.set('client_id', settings.clientId);
      body.set('client_secret', settings.clientSecret);
    }
    const answer = await fetchJson(discovery.token_endpoint, { method: 'POST', headers, body: body.toString() });
    if (answer.status !== 200) {
      const error = typeof answer.json.error === 'string' ? answer.json.error : `HTTP ${answer.status}`;
      throw signInFailed(`The identity provider refused the sign-in's code (${error}): it may have been used already. Start again.`);
    }
    if (typeof answer.json.id_token !== 'string') throw signInFailed('The identity provider answered without an ID token.');
    return answer.json.id_token;
  }

  /** The ID token checked (signature by the provider's keys, iss, aud, azp, exp, iat, nonce) and what it says of the person. */
  async verify(settings: SsoSettings, provider: Provider, idToken: string, nonce: string): Promise<VerifiedPerson> {
    const { errors, jwtVerify } = await joseOnUse();
    let payload: Jose.JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, provider.keys, {
        issuer: settings.issuer,
        audience: settings.clientId,
        clockTolerance: Math.floor(this.options.clockSkewMs / 1000),
        maxTokenAge: kMaxTokenAgeSeconds,
        requiredClaims: ['sub', 'exp', 'iat'],
        currentDate: new Date(this.options.now()),
      }));
    } catch (err) {
      if (err instanceof errors.JOSEError)
        throw signInFailed(`The identity provider's ID token was refused: ${tokenProblem(err, errors)}.`);
      throw err;
    }
    // OpenID Connect Core §3.1.3.7: with several audiences, azp names the client the token was made for.
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== settings.clientId)
      throw signInFailed("The identity provider's ID token was refused: it was made for another client (azp).");
    if (payload.nonce !== nonce)
      throw signInFailed("The identity provider's ID token was refused: its nonce is not this sign-in's (a replayed token).");
    return {
      subject: payload.sub!,
      email: typeof payload.email === 'string' ? payload.email : null,
      name: typeof payload.name === 'string' ? payload.name : null,
      groups: groupsOf(payload[settings.groupsClaim]),
    };
  }
}

function tokenProblem(err: Jose.errors.JOSEError, errors: typeof Jose.errors): string {
  if (err instanceof errors.JWTExpired) return `it has expired (exp ${String(err.payload.exp)}, beyond the allowed clock skew)`;
  if (err instanceof errors.JWTClaimValidationFailed) return `its ${err.claim} claim is not right (${err.reason}: ${err.message})`;
  if (err instanceof errors.JWKSNoMatchingKey) return 'it is signed with a key the identity provider does not publish';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'its signature is not valid';
  return err.message;
}

/** The groups claim as a list of names: a list of strings, or one string; anything else is no groups. */
function groupsOf(claim: unknown): string[] {
  const list = typeof claim === 'string' ? [claim] : Array.isArray(claim) ? claim : [];
  return list.filter((g): g is string => typeof g === 'string' && g.length > 0 && g.length <= 256).slice(0, kMaxGroups);
}

async function fetchJson(url: string, init: RequestInit = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(kFetchTimeoutMs) });
  } catch (err) {
    throw signInFailed(`The identity provider could not be reached at ${url} (${(err as Error).message}). Try again later.`);
  }
  let json: unknown;
  try {
    json = await response.json();
  } catch {
    json = null;
  }
  return { status: response.status, json: json !== null && typeof json === 'object' ? (json as Record<string, unknown>) : {} };
}

/** OpenID Connect Discovery 1.0 §4: the document at <issuer>/.well-known/openid-configuration, whose issuer must be the one asked for. */
async function discover(issuer: string): Promise<Discovery> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const { status, json } = await fetchJson(url);
  if (status !== 200) throw signInFailed(`The identity provider's discovery document (${url}) answered HTTP ${status}.`);
  const strings = ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const;
  const missing = strings.filter((key) => typeof json[key] !== 'string');
  if (missing.length > 0) throw signInFailed(`The identity provider's discovery document (${url}) lacks ${missing.join(', ')}.`);
  if (json.issuer !== issuer)
    throw signInFailed(`The identity provider's discovery document names issuer ${String(json.issuer)}, not the configured ${issuer}.`);
  const discovery = json as unknown as Discovery;
  const pkce = discovery.code_challenge_methods_supported;
  if (Array.isArray(pkce) && !pkce.includes('S256')) throw signInFailed('The identity provider does not support PKCE with S256.');
  return discovery;
}
