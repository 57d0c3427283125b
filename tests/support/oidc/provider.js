// A real OpenID Connect provider for the web app's sign-in tests: panva's oidc-provider (OpenID
// certified), on loopback, with three people, one confidential client, PKCE, JWT access tokens
// for the API (resource `urn:deep-research`) and RP-initiated logout. Started by
// tests/support/oidc_provider.py:
//
//   node provider.js '{"port": 0, "clientId": "...", "clientSecret": "...",
//                      "redirectUris": ["..."], "postLogoutRedirectUris": ["..."],
//                      "idTokenClaims": false}'
//
// By default its ID tokens name only the subject (`sub`): email and groups come from its userinfo
// endpoint, as oidc-provider's and Okta's do when an access token is issued too. With
// `idTokenClaims` they are in the ID token as well (as Keycloak's and Google's are).
//
// It prints `ready ISSUER` once it listens. Its login page is oidc-provider's own development
// form (any password; the login is the person's email). POST /__test/tamper {"mode": ...} makes
// the next ID tokens it hands out `forged` (signed with another key under the same key id),
// `expired`, or for the `wrong-audience`; mode `none` ends that. Nothing else is altered.
import { createServer } from 'node:http';
import { generateKeyPair, exportJWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';

const options = JSON.parse(process.argv[2] || '{}');
const PEOPLE = {
  'ada@example.org': { name: 'Ada Lovelace', groups: ['research', 'analysts'] },
  'grace@example.org': { name: 'Grace Hopper', groups: ['research'] },
  'mallory@example.org': { name: 'Mallory', groups: ['visitors'] },
};

async function signingKey(kid) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

const real = await signingKey('test-signing-key');
const other = await signingKey('test-signing-key'); // the forger's: same key id, another key
let tamper = 'none';

const server = createServer();
await new Promise((resolve) => server.listen(options.port || 0, '127.0.0.1', resolve));
const issuer = `http://localhost:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: options.clientId,
    client_secret: options.clientSecret,
    redirect_uris: options.redirectUris,
    post_logout_redirect_uris: options.postLogoutRedirectUris || [],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  jwks: { keys: [real] },
  pkce: { required: () => true },
  scopes: ['openid', 'email', 'profile', 'groups'],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
  conformIdTokenClaims: !options.idTokenClaims,
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: { enabled: true },
    resourceIndicators: {
      enabled: true,
      getResourceServerInfo: () => ({
        scope: 'openid email profile groups',
        audience: options.clientId,
        accessTokenFormat: 'jwt',
        accessTokenTTL: 600,
      }),
    },
  },
  extraTokenClaims: async (ctx, token) => {
    const person = PEOPLE[token.accountId];
    return person ? { email: token.accountId, email_verified: true, groups: person.groups } : {};
  },
  // The one client is the app itself: no consent screen (the grant is made at login).
  loadExistingGrant: async (ctx) => {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope('openid email profile groups');
    grant.addResourceScope('urn:deep-research', 'openid email profile groups');
    await grant.save();
    return grant;
  },
  findAccount: async (ctx, id) => {
    const person = PEOPLE[id];
    if (!person) return undefined;
    return {
      accountId: id,
      claims: async () => ({ sub: id, email: id, email_verified: true, name: person.name, groups: person.groups }),
    };
  },
  ttl: { IdToken: 600, Session: 3600, Interaction: 600, Grant: 3600, AuthorizationCode: 60 },
});

async function tampered(idToken) {
  const [, payload] = idToken.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  const now = Math.floor(Date.now() / 1000);
  if (tamper === 'expired') Object.assign(claims, { iat: now - 7200, exp: now - 3600 });
  if (tamper === 'wrong-audience') claims.aud = 'another-application';
  const key = tamper === 'forged' ? other : real;
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid }).sign(
    await importKey(key),
  );
}

async function importKey(jwk) {
  const { importJWK } = await import('jose');
  return importJWK(jwk, 'RS256');
}

provider.use(async (ctx, next) => {
  await next();
  if (ctx.path === '/token' && tamper !== 'none' && ctx.body && ctx.body.id_token) {
    ctx.body = { ...ctx.body, id_token: await tampered(ctx.body.id_token) };
  }
});

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.method === 'POST' && req.url === '/__test/tamper') {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      tamper = JSON.parse(body || '{}').mode || 'none';
      res.writeHead(204).end();
    });
    return;
  }
  callback(req, res);
});

console.log(`ready ${issuer}`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
