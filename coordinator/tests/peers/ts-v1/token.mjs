// Get an access token from the TypeScript SDK 1.x example's demo authorization server
// (setupAuthServer in examples/server/demoInMemoryOAuthProvider.js), through its real OAuth
// flow: dynamic client registration, authorization with PKCE (the demo approves at once),
// and the code exchange. The token is issued for RESOURCE, so a token for another audience
// is one call away.
//
// Usage: node token.mjs AUTH_PORT RESOURCE   (prints the access token on stdout)
import { createHash, randomBytes } from 'node:crypto';

const [authPort, resource] = process.argv.slice(2);
const as = `http://127.0.0.1:${authPort}`;
const redirectUri = 'http://127.0.0.1:9/callback';

async function ok(res, what) {
  if (!res.ok && res.status !== 302) {
    throw new Error(`${what}: ${res.status} ${await res.text()}`);
  }
  return res;
}

const client = await (await ok(await fetch(`${as}/register`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    client_name: 'vantage-test',
  }),
}), 'register')).json();

const verifier = randomBytes(32).toString('base64url');
const challenge = createHash('sha256').update(verifier).digest('base64url');
const authorize = new URL(`${as}/authorize`);
for (const [k, v] of Object.entries({
  response_type: 'code',
  client_id: client.client_id,
  redirect_uri: redirectUri,
  code_challenge: challenge,
  code_challenge_method: 'S256',
  scope: 'mcp:tools',
  resource,
})) {
  authorize.searchParams.set(k, v);
}
const redirected = await ok(await fetch(authorize, { redirect: 'manual' }), 'authorize');
const code = new URL(redirected.headers.get('location')).searchParams.get('code');
if (!code) {
  throw new Error(`authorize: no code in ${redirected.headers.get('location')}`);
}
const form = new URLSearchParams({
  grant_type: 'authorization_code',
  code,
  redirect_uri: redirectUri,
  client_id: client.client_id,
  code_verifier: verifier,
  resource,
});
if (client.client_secret) {
  form.set('client_secret', client.client_secret);
}
const token = await (await ok(await fetch(`${as}/token`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: form,
}), 'token')).json();
console.log(token.access_token);
