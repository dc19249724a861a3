// A real OpenID Connect identity provider for single sign-on's tests: the npm `oidc-provider` on a free
// loopback port, with one confidential client (Flagwire's), its development login form (any login,
// any password) and consent given without a page. The test changes what it says of a person (their
// groups), and may rewrite the ID token its token endpoint issues (signed again with its key, or with
// another) and publish another signing key: how the relying party's refusals are proved.
import { createServer, type Server } from 'node:http';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';
import { decodeJwt, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import { freePort } from './free-port.js';
import { consoleCall, type WebSession } from './web-console.js';

export interface Person {
  email: string;
  name: string;
  groups: string[];
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  people: Map<string, Person>;
  /** The key the provider signs with (its jwks). */
  key: SigningKey;
  /** Rewrites the next ID tokens the token endpoint issues (null: as issued). */
  rewrite: ((payload: JWTPayload) => JWTPayload) | null;
  /** Signs the rewritten tokens with this key instead of the provider's (a rotation, or a forgery). */
  signWith: SigningKey | null;
  /** Published in the JWKS beside the provider's own (a rotated-in key). */
  published: JWK[];
  /** JWKS requests served so far. */
  jwksRequests(): number;
  stop(): Promise<void>;
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** Starts the identity provider; `redirectUri` is Flagwire's callback (one per node), the redirects its client may use. */
export async function startIdp(redirectUri: string | readonly string[]): Promise<TestIdp> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const key = await signingKey('key-1');
  const privateJwk = { ...(await exportJWK(key.privateKey)), kid: key.kid, alg: 'RS256', use: 'sig' };
  const people = new Map<string, Person>();
  let jwksRequests = 0;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'flagwire',
        client_secret: 'flagwire-client-secret',
        redirect_uris: typeof redirectUri === 'string' ? [redirectUri] : [...redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [privateJwk] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    // The scopes' claims in the ID token itself, as Okta and Entra ID put them.
    conformIdTokenClaims: false,
    findAccount: (_ctx, id) => {
      const person = people.get(id);
      return person === undefined
        ? undefined
        : {
            accountId: id,
            claims: () => ({ sub: id, email: person.email, email_verified: true, name: person.name, groups: person.groups }),
          };
    },
    // Consent given without a page: every client of this provider is the test's.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const { Grant } = ctx.oidc.provider;
      const grantId = ctx.oidc.session?.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId !== undefined) {
        const found = await Grant.find(grantId);
        if (found !== undefined) return found;
      }
      const grant = new Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile groups');
      await grant.save();
      return grant;
    },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['oidc-test-cookie-key'] },
  });
  const idp: TestIdp = {
    issuer,
    clientId: 'flagwire',
    clientSecret: 'flagwire-client-secret',
    people,
    key,
    rewrite: null,
    signWith: null,
    published: [],
    jwksRequests: () => jwksRequests,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path === '/jwks') {
      jwksRequests++;
      const body = ctx.body as { keys: JWK[] };
      ctx.body = { keys: [...body.keys, ...idp.published] };
    }
    if (ctx.path === '/token' && ctx.status === 200 && (idp.rewrite !== null || idp.signWith !== null)) {
      const body = ctx.body as { id_token: string };
      const payload = (idp.rewrite ?? ((p) => p))(decodeJwt(body.id_token));
      const signer = idp.signWith ?? key;
      ctx.body = {
        ...body,
        id_token: await new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: signer.kid }).sign(signer.privateKey),
      };
    }
  });
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return idp;
}

/** A browser's cookies, by name (every test host is 127.0.0.1, and a browser sends a host's cookies whatever its port). */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  take(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || pair!.slice(eq + 1) === '') this.cookies.delete(name);
      else this.cookies.set(name, pair!.slice(eq + 1).trim());
    }
  }

  async get(url: string): Promise<Response> {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: this.header() } });
    this.take(res.headers);
    return res;
  }

  async post(url: string, form: Record<string, string>): Promise<Response> {
    const res = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: this.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    this.take(res.headers);
    return res;
  }
}

/**
 * A browser's way from Flagwire's sign-in start through the identity provider's login form (as `login`)
 * to the redirect back: the callback URL it would load, and the authorization request's URL.
 */
export async function signInAtIdp(jar: CookieJar, startUrl: string, login: string): Promise<{ callback: string; authorize: string }> {
  const start = await jar.get(startUrl);
  if (start.status !== 302) throw new Error(`start answered ${start.status}: ${await start.text()}`);
  const authorize = start.headers.get('location')!;
  let url = authorize;
  for (let hops = 0; hops < 20; hops++) {
    const res = await jar.get(url);
    const location = res.headers.get('location');
    if (location !== null) {
      const next = new URL(location, url).href;
      if (next.includes('/console/sso/callback')) return { callback: next, authorize };
      url = next;
      continue;
    }
    const page = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (res.status !== 200 || action === undefined) throw new Error(`the identity provider answered ${res.status}: ${page.slice(0, 500)}`);
    const posted = await jar.post(new URL(action.replace(/&amp;/g, '&'), url).href, { prompt: 'login', login, password: 'any' });
    url = new URL(posted.headers.get('location')!, url).href;
  }
  throw new Error('no redirect back to Flagwire after 20 hops');
}

/**
 * The organisation's single sign-on set to `idp` by its Owner in the console (its groups asked for, a
 * person unknown there made a member), with `groupRoles`: the console's answer.
 */
export function configureSso(base: string, owner: WebSession, orgId: string, idp: TestIdp, groupRoles: Record<string, string>) {
  return consoleCall(base, owner, 'PATCH', `orgs/${orgId}/sso`, {
    body: {
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      scopes: ['email', 'profile', 'groups'],
      groupRoles,
      createMembers: true,
    },
  });
}

/** A whole single sign-on as `login` from `startUrl` in a new browser: the callback's answer, and the console session it made (null when refused). */
export async function ssoSignIn(
  base: string,
  startUrl: string,
  login: string,
): Promise<{ res: Response; session: WebSession | null; jar: CookieJar; callback: string; authorize: string; body: any }> {
  const jar = new CookieJar();
  const { callback, authorize } = await signInAtIdp(jar, startUrl, login);
  const res = await jar.get(callback);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('flagwire_session='));
  let session: WebSession | null = null;
  if (res.status === 302 && cookie !== undefined) {
    const jarCookie = cookie.split(';')[0]!;
    const view = await consoleCall(base, { cookie: jarCookie, csrf: '', setCookie: cookie }, 'GET', 'session');
    session = { cookie: jarCookie, csrf: view.json.csrfToken, setCookie: cookie };
  }
  return { res, session, jar, callback, authorize, body: res.status === 302 ? null : await res.json() };
}
