/**
 * default.jwt: the token in a request header is verified against the key set (JWKS) at `jwksUri`, fetched
 * through the engine's guarded outbound path and cached per URI. The check against fake services first,
 * then end to end against a JWKS server on 127.0.0.1 and at a cloud metadata address, which the address
 * policy refuses.
 */
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  exportJWK,
  exportSPKI,
  FlattenedSign,
  generateKeyPair,
  importJWK,
  SignJWT,
  type CryptoKey,
  type JWK,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkParameterError } from '../../src/hooks/registry.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { postChat, target } from '../routing/support.js';
import { fakeServices, onRequest, runCheck } from './support.js';

interface Signer {
  key: CryptoKey;
  jwk: JWK;
}

async function signer(alg: 'RS256' | 'ES256', kid: string): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { key: privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

const now = (): number => Math.floor(Date.now() / 1000);

function token(
  by: Signer,
  claims: Record<string, unknown> = {},
  header: { alg?: string; kid?: string } = {},
): Promise<string> {
  return new SignJWT({ sub: 'user-1', ...claims })
    .setProtectedHeader({ alg: header.alg ?? by.jwk.alg!, kid: header.kid ?? by.jwk.kid! })
    .setIssuedAt(typeof claims.iat === 'number' ? claims.iat : now())
    .sign(by.key);
}

let uris = 0;
/** A JWKS URI no other test has used: the check's cache is per URI and outlives a test. */
const freshUri = (): string => `https://idp${++uris}.example.com/.well-known/jwks.json`;

let rsa: Signer;
let ec: Signer;
let other: Signer;

beforeAll(async () => {
  [rsa, ec, other] = await Promise.all([
    signer('RS256', 'rsa-1'),
    signer('ES256', 'ec-1'),
    signer('RS256', 'rsa-1'),
  ]);
});

function jwksServices(...sets: JWK[][]) {
  let served = 0;
  return fakeServices({
    get: () => ({ status: 200, body: { keys: sets[Math.min(served++, sets.length - 1)] } }),
  });
}

const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

describe('default.jwt, the check', () => {
  it('passes a token signed by a key of the set, and fetches the set once for its cacheMaxAge', async () => {
    const services = jwksServices([rsa.jwk, ec.jwk]);
    const jwksUri = freshUri();
    for (const by of [rsa, ec]) {
      const result = await runCheck(
        'jwt',
        onRequest('hi', bearer(await token(by))),
        { jwksUri, algorithms: ['RS256', 'ES256'] },
        services,
      );
      expect(result).toMatchObject({ verdict: true, explanation: 'JWT token validation succeeded' });
    }
    expect(services.gets).toEqual([jwksUri]);
  });

  it('reads the header headerKey names, with or without Bearer', async () => {
    const services = jwksServices([rsa.jwk]);
    const t = await token(rsa);
    const ctx = onRequest('hi', { headers: { 'x-user-token': t } });
    const result = await runCheck('jwt', ctx, { jwksUri: freshUri(), headerKey: 'X-User-Token' }, services);
    expect(result.verdict).toBe(true);
  });

  it('fails a request without the header, fetching nothing', async () => {
    const services = jwksServices([rsa.jwk]);
    const result = await runCheck('jwt', onRequest('hi'), { jwksUri: freshUri() }, services);
    expect(result).toMatchObject({ verdict: false, explanation: 'Missing authorization header' });
    expect(services.gets).toEqual([]);
  });

  it('fails an expired token, and one not yet valid, beyond clockTolerance', async () => {
    const services = jwksServices([rsa.jwk]);
    const jwksUri = freshUri();
    const expired = await token(rsa, { exp: now() - 30 });
    const failed = await runCheck('jwt', onRequest('hi', bearer(expired)), { jwksUri }, services);
    expect(failed).toMatchObject({ verdict: false, explanation: 'Token has expired' });
    const tolerated = await runCheck(
      'jwt',
      onRequest('hi', bearer(expired)),
      { jwksUri, clockTolerance: 60 },
      services,
    );
    expect(tolerated.verdict).toBe(true);
    const early = await token(rsa, { nbf: now() + 120 });
    const notYet = await runCheck('jwt', onRequest('hi', bearer(early)), { jwksUri }, services);
    expect(notYet).toMatchObject({ verdict: false, explanation: 'Token not yet valid' });
    const slightlyEarly = await token(rsa, { nbf: now() + 2 });
    expect(
      (await runCheck('jwt', onRequest('hi', bearer(slightlyEarly)), { jwksUri }, services)).verdict,
    ).toBe(true);
  });

  it('fails a token older than maxTokenAge (1d by default)', async () => {
    const services = jwksServices([rsa.jwk]);
    const jwksUri = freshUri();
    const twoHours = await token(rsa, { iat: now() - 7200 });
    const twoDays = await token(rsa, { iat: now() - 2 * 86400 });
    const run = (t: string, extra: Record<string, unknown> = {}) =>
      runCheck('jwt', onRequest('hi', bearer(t)), { jwksUri, ...extra }, services);
    expect((await run(twoHours)).verdict).toBe(true);
    expect((await run(twoHours, { maxTokenAge: '1h' })).verdict).toBe(false);
    expect((await run(twoHours, { maxTokenAge: 3 * 3600 })).verdict).toBe(true);
    const old = await run(twoDays);
    expect(old.verdict).toBe(false);
    expect(old.explanation).toMatch(/"iat"/);
  });

  it('fails a wrong signature, a wrong algorithm, and a token that is not a JWT', async () => {
    const services = jwksServices([rsa.jwk]);
    const jwksUri = freshUri();
    const forged = await token(other);
    const wrongSig = await runCheck('jwt', onRequest('hi', bearer(forged)), { jwksUri }, services);
    expect(wrongSig).toMatchObject({ verdict: false });
    expect(wrongSig.explanation).toMatch(/signature/);
    // Signed with an EC key under the RSA key's id: the set holds no ES256 key of that id.
    const wrongAlg = await token(ec, {}, { kid: 'rsa-1' });
    expect((await runCheck('jwt', onRequest('hi', bearer(wrongAlg)), { jwksUri }, services)).verdict).toBe(
      false,
    );
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.`;
    expect((await runCheck('jwt', onRequest('hi', bearer(unsigned)), { jwksUri }, services)).verdict).toBe(
      false,
    );
    expect((await runCheck('jwt', onRequest('hi', bearer('not-a-jwt')), { jwksUri }, services)).verdict).toBe(
      false,
    );
  });

  it('takes only the algorithms listed, when algorithms is given', async () => {
    const services = jwksServices([rsa.jwk, ec.jwk]);
    const params = { jwksUri: freshUri(), algorithms: ['ES256', 'ES384'] };
    expect((await runCheck('jwt', onRequest('hi', bearer(await token(ec))), params, services)).verdict).toBe(
      true,
    );
    const refused = await runCheck('jwt', onRequest('hi', bearer(await token(rsa))), params, services);
    expect(refused.verdict).toBe(false);
    expect(refused.explanation).toMatch(/^JWT signature validation error: .*"alg"/);
  });

  it('takes only RS256 when algorithms is not given, or is empty, as the reference gateway does', async () => {
    const services = jwksServices([rsa.jwk, ec.jwk]);
    const jwksUri = freshUri();
    const run = async (by: Signer, extra: Record<string, unknown> = {}) =>
      runCheck('jwt', onRequest('hi', bearer(await token(by))), { jwksUri, ...extra }, services);
    expect((await run(rsa)).verdict).toBe(true);
    for (const extra of [{}, { algorithms: [] }]) {
      const refused = await run(ec, extra);
      expect(refused).toMatchObject({ verdict: false, data: { validations: { signatureValid: false } } });
      expect(refused.explanation).toMatch(/^JWT signature validation error: .*"alg"/);
    }
    // An explicit list still decides.
    expect((await run(ec, { algorithms: ['RS256', 'ES256'] })).verdict).toBe(true);
  });

  it('refuses alg none and an HMAC token keyed with the public key, whatever algorithms says', async () => {
    const publicKey = await importJWK(rsa.jwk, 'RS256');
    const pem = await exportSPKI(publicKey as CryptoKey);
    const forge = (alg: string, secret: string | null) => {
      const head = Buffer.from(JSON.stringify({ alg, kid: 'rsa-1', typ: 'JWT' })).toString('base64url');
      const body = Buffer.from(JSON.stringify({ sub: 'admin', iat: now() })).toString('base64url');
      const signature =
        secret === null ? '' : createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
      return `${head}.${body}.${signature}`;
    };
    const forged = [
      forge('none', null),
      forge('HS256', pem),
      forge('HS256', JSON.stringify(rsa.jwk)),
      forge('HS256', rsa.jwk.n!),
    ];
    // A fetched set may hold a symmetric key under the same id: it never verifies anything either.
    const oct = { kty: 'oct', kid: 'rsa-1', k: Buffer.from(pem).toString('base64url') };
    const services = jwksServices([rsa.jwk, oct]);
    const jwksUri = freshUri();
    for (const params of [
      { jwksUri },
      { jwksUri, algorithms: ['RS256'] },
      { jwks: { keys: [rsa.jwk] } },
      { jwks: { keys: [rsa.jwk] }, algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'] },
    ]) {
      for (const t of forged) {
        const result = await runCheck('jwt', onRequest('hi', bearer(t)), params, services);
        expect(result.verdict, `${JSON.stringify(params)} ${t.split('.')[0]}`).toBe(false);
      }
    }
  });

  it('fetches the set again for a key id it lacks, at most once per 30 s cooldown', async () => {
    const services = jwksServices([rsa.jwk], [rsa.jwk, ec.jwk]);
    const jwksUri = freshUri();
    const run = async (by: Signer, kid?: string) =>
      runCheck(
        'jwt',
        onRequest('hi', bearer(await token(by, {}, { kid }))),
        { jwksUri, algorithms: ['RS256', 'ES256'] },
        services,
      );
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect((await run(rsa)).verdict).toBe(true);
      // Fetched just now: an unknown key id is not worth another fetch yet.
      expect(await run(ec)).toMatchObject({ verdict: false, explanation: 'No matching key found for kid' });
      expect(services.gets).toHaveLength(1);
      vi.setSystemTime(Date.now() + 31_000);
      expect((await run(ec)).verdict).toBe(true);
      expect(services.gets).toHaveLength(2);
      expect((await run(ec, 'ec-2')).verdict).toBe(false);
      expect(services.gets).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('fails a token of an unknown key id when fetching the set again fails, rather than err', async () => {
    // An error is a pass under the default on_error: a forged kid must not pass while the key set is down.
    let served = 0;
    const answers = [
      () => ({ status: 200, body: { keys: [rsa.jwk] } }),
      () => ({ status: 503, body: undefined }),
      () => Promise.reject(new Error('connect ECONNREFUSED')),
    ];
    const services = fakeServices({ get: () => answers[Math.min(served++, answers.length - 1)]!() });
    const jwksUri = freshUri();
    const run = async (by: Signer, kid?: string) =>
      runCheck(
        'jwt',
        onRequest('hi', bearer(await token(by, {}, { kid }))),
        { jwksUri, algorithms: ['RS256', 'ES256'] },
        services,
      );
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect((await run(rsa)).verdict).toBe(true);
      for (const failure of ['a 503', 'a network error']) {
        vi.setSystemTime(Date.now() + 31_000);
        expect(await run(ec), failure).toMatchObject({
          verdict: false,
          explanation: 'No matching key found for kid',
        });
        // The set kept still verifies the tokens of its keys.
        expect((await run(rsa)).verdict, failure).toBe(true);
        // A failed fetch counts for the cooldown too: another unknown key id does not fetch at once.
        const fetched = services.gets.length;
        expect((await run(ec, 'ec-2')).verdict, failure).toBe(false);
        expect(services.gets, failure).toHaveLength(fetched);
      }
      expect(services.gets).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('has tokens that arrive while the set is fetched again wait for that fetch', async () => {
    // After a key is rotated in, every client comes with a token of the new key id at once.
    let release: (answer: { status: number; body: unknown }) => void = () => {};
    let served = 0;
    const services = fakeServices({
      get: () => {
        if (served++ === 0) return { status: 200, body: { keys: [rsa.jwk] } };
        return new Promise((resolve) => (release = resolve));
      },
    });
    const jwksUri = freshUri();
    const run = (t: string) =>
      runCheck('jwt', onRequest('hi', bearer(t)), { jwksUri, algorithms: ['RS256', 'ES256'] }, services);
    // Until the fetch has begun, then a while for the other checks to come to it.
    const fetching = async (gets: number) => {
      await vi.waitFor(() => expect(services.gets).toHaveLength(gets));
      await new Promise((resolve) => setTimeout(resolve, 50));
    };
    const [first, rotated, unknown, another] = await Promise.all([
      token(rsa),
      token(ec),
      token(ec, {}, { kid: 'ec-2' }),
      token(ec, {}, { kid: 'ec-3' }),
    ]);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect((await run(first)).verdict).toBe(true);
      vi.setSystemTime(Date.now() + 31_000);
      const afterRotation = [run(rotated), run(rotated), run(rotated)];
      await fetching(2);
      release({ status: 200, body: { keys: [rsa.jwk, ec.jwk] } });
      for (const result of await Promise.all(afterRotation)) {
        expect(result).toMatchObject({ verdict: true, explanation: 'JWT token validation succeeded' });
      }
      expect(services.gets).toHaveLength(2);

      // A fetch that fails fails those waiting for it, and starts the cooldown only once it has failed.
      vi.setSystemTime(Date.now() + 31_000);
      const started = Date.now();
      const unknownKid = [run(unknown), run(unknown)];
      await fetching(3);
      vi.setSystemTime(started + 20_000);
      release({ status: 503, body: undefined });
      for (const result of await Promise.all(unknownKid)) {
        expect(result).toMatchObject({ verdict: false, explanation: 'No matching key found for kid' });
      }
      vi.setSystemTime(started + 40_000);
      expect((await run(another)).verdict).toBe(false);
      expect(services.gets).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('fails a token of an unknown key id shortly before its deadline when fetching the set again takes longer', async () => {
    // A timeout is an error, which the default on_error passes: a made-up kid must not pass while the set's
    // host is slow. The fetch goes on, and refreshes the set for later tokens.
    let release: (answer: { status: number; body: unknown }) => void = () => {};
    let served = 0;
    const services = fakeServices({
      get: () => {
        if (served++ === 0) return { status: 200, body: { keys: [rsa.jwk] } };
        return new Promise((resolve) => (release = resolve));
      },
    });
    const jwksUri = freshUri();
    const params = { jwksUri, algorithms: ['RS256', 'ES256'] };
    const run = async (t: string, timeoutMs: number) => {
      const ctx = onRequest('hi', { ...bearer(t), signal: AbortSignal.timeout(timeoutMs) });
      ctx.deadline = performance.now() + timeoutMs;
      return runCheck('jwt', ctx, params, services);
    };
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect((await run(await token(rsa), 1000)).verdict).toBe(true);
      vi.setSystemTime(Date.now() + 31_000);
      const started = performance.now();
      expect(await run(await token(ec), 400)).toMatchObject({
        verdict: false,
        explanation: 'No matching key found for kid',
      });
      expect(performance.now() - started).toBeLessThan(400);
      expect(services.gets).toHaveLength(2);
      // A token that comes while the fetch is still under way waits for it, up to its own deadline.
      const waiting = run(await token(ec), 2000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      release({ status: 200, body: { keys: [rsa.jwk, ec.jwk] } });
      expect((await waiting).verdict).toBe(true);
      expect(services.gets).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('errs on the first token for a set whose fetch outlasts the check, as there is no set to judge it by', async () => {
    let release: (answer: { status: number; body: unknown }) => void = () => {};
    const services = fakeServices({ get: () => new Promise((resolve) => (release = resolve)) });
    const jwksUri = freshUri();
    const run = async (t: string, timeoutMs: number) => {
      const ctx = onRequest('hi', { ...bearer(t), signal: AbortSignal.timeout(timeoutMs) });
      ctx.deadline = performance.now() + timeoutMs;
      return runCheck('jwt', ctx, { jwksUri }, services);
    };
    await expect(run(await token(other, {}, { kid: 'made-up' }), 300)).rejects.toThrow(/timeout/);
    // The fetch went on: its set serves the next token.
    release({ status: 200, body: { keys: [rsa.jwk] } });
    expect((await run(await token(rsa), 1000)).verdict).toBe(true);
    expect(services.gets).toHaveLength(1);
  });

  it('tries each key of the set that has the token key id, as a set may hold two', async () => {
    // `other` is an RSA key published under the same id as `rsa`, as when a key is rotated in place.
    for (const keys of [
      [other.jwk, rsa.jwk],
      [rsa.jwk, other.jwk],
    ]) {
      const services = jwksServices(keys);
      const params = { jwksUri: freshUri() };
      const good = await runCheck('jwt', onRequest('hi', bearer(await token(rsa))), params, services);
      expect(good).toMatchObject({ verdict: true, explanation: 'JWT token validation succeeded' });
      const expired = await runCheck(
        'jwt',
        onRequest('hi', bearer(await token(rsa, { exp: now() - 60 }))),
        params,
        services,
      );
      expect(expired).toMatchObject({ verdict: false, explanation: 'Token has expired' });
      const forged = await runCheck(
        'jwt',
        onRequest('hi', bearer(await token(ec, {}, { kid: 'rsa-1', alg: 'ES256' }))),
        { ...params, algorithms: ['RS256', 'ES256'] },
        services,
      );
      expect(forged.verdict).toBe(false);
      const unknown = await new SignJWT({ sub: 'x' })
        .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
        .setIssuedAt()
        .sign((await generateKeyPair('RS256')).privateKey);
      const wrong = await runCheck('jwt', onRequest('hi', bearer(unknown)), params, services);
      expect(wrong).toMatchObject({ verdict: false, data: { validations: { signatureValid: false } } });
      expect(wrong.explanation).toMatch(/^JWT signature validation error: signature verification failed/);
    }
  });

  it('fails, rather than errs, a token whose key id names a key that cannot verify, trying the next one', async () => {
    // An error is a pass under the default on_error: a key jose will not use (an RSA key shorter than
    // 2048 bits, a malformed one) must count as a key that does not verify.
    const short = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const shortJwk = { ...(await exportJWK(short.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' };
    // No modulus: WebCrypto refuses to import it.
    const broken = { kty: 'RSA', kid: 'rsa-1', alg: 'RS256', use: 'sig', e: 'AQAB' };
    const forged = await token(other);
    const good = await token(rsa);
    for (const keys of [[shortJwk, rsa.jwk], [rsa.jwk, shortJwk], [broken, rsa.jwk], [shortJwk], [broken]]) {
      const services = jwksServices(keys);
      for (const params of [{ jwksUri: freshUri() }, { jwks: { keys } }]) {
        const names = keys.map((k) => (k === rsa.jwk ? 'rsa' : k === shortJwk ? 'short' : 'broken'));
        const label = `${names.join(',')} ${'jwks' in params ? 'inline' : 'fetched'}`;
        const refused = await runCheck('jwt', onRequest('hi', bearer(forged)), params, services);
        expect(refused, label).toMatchObject({
          verdict: false,
          data: { validations: { signatureValid: false } },
        });
        expect(refused.explanation, label).toMatch(/^JWT signature validation error: /);
        if (keys.includes(rsa.jwk)) {
          const passed = await runCheck('jwt', onRequest('hi', bearer(good)), params, services);
          expect(passed, label).toMatchObject({
            verdict: true,
            explanation: 'JWT token validation succeeded',
          });
        }
      }
    }
  });

  it('fails, rather than errs, whatever a token holds', async () => {
    const b64 = (value: unknown) =>
      Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
    const good = await token(rsa);
    const [, body, signature] = good.split('.') as [string, string, string];
    const head = (header: Record<string, unknown>) => b64({ alg: 'RS256', kid: 'rsa-1', ...header });
    // Signed by the key of the set, but with its payload not base64url-encoded (RFC 7797).
    const flat = await new FlattenedSign(new TextEncoder().encode('{"sub":"user-1"}'))
      .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1', b64: false, crit: ['b64'] })
      .sign(rsa.key);
    const unencoded = `${flat.protected}.${flat.payload}.${flat.signature}`;
    const tokens = {
      empty: '.',
      dots: '..',
      fourParts: `${good}.x`,
      headerNotJson: `${b64('{alg')}.${body}.${signature}`,
      headerArray: `${b64(['RS256'])}.${body}.${signature}`,
      headerNull: `${b64('null')}.${body}.${signature}`,
      payloadNotJson: `${head({})}.${b64('sub')}.${signature}`,
      payloadArray: `${head({})}.${b64([1])}.${signature}`,
      payloadNotAscii: `${head({})}.é${body}.${signature}`,
      signatureNotBase64url: `${head({})}.${body}.!!!`,
      unknownAlg: `${head({ alg: 'XY999' })}.${body}.${signature}`,
      algNotString: `${head({ alg: { name: 'RS256' } })}.${body}.${signature}`,
      kidNotString: `${head({ kid: ['rsa-1'] })}.${body}.${signature}`,
      kidProto: `${head({ kid: '__proto__' })}.${body}.${signature}`,
      kidConstructor: `${head({ kid: 'constructor' })}.${body}.${signature}`,
      critUnknown: `${head({ crit: ['exp'], exp: 1 })}.${body}.${signature}`,
      critNotArray: `${head({ crit: 'b64' })}.${body}.${signature}`,
      critEmpty: `${head({ crit: [] })}.${body}.${signature}`,
      critB64False: `${head({ crit: ['b64'], b64: false })}.${body}.${signature}`,
      b64NotBoolean: `${head({ crit: ['b64'], b64: 'no' })}.${body}.${signature}`,
      embeddedJwk: `${head({ jwk: other.jwk })}.${b64({ sub: 'admin' })}.${signature}`,
      unencoded,
      huge: `${head({})}.${b64({ sub: 'x', pad: 'a'.repeat(1 << 20) })}.${signature}`,
      hugeSignature: `${head({})}.${body}.${'A'.repeat(1 << 20)}`,
    };
    const services = jwksServices([rsa.jwk, ec.jwk]);
    const algorithms = ['RS256', 'ES256', 'PS256', 'EdDSA'];
    for (const params of [
      { jwksUri: freshUri() },
      { jwksUri: freshUri(), algorithms },
      { jwks: { keys: [rsa.jwk, ec.jwk] }, algorithms },
    ]) {
      for (const [name, t] of Object.entries(tokens)) {
        const label = `${name} ${JSON.stringify(params).slice(0, 30)}`;
        const result = await runCheck('jwt', onRequest('hi', bearer(t)), params, services).catch(
          (err: unknown) => ({ threw: String(err) }),
        );
        expect(result, label).toMatchObject({ verdict: false });
      }
    }
  });

  it('fetches the set again once it is older than cacheMaxAge', async () => {
    const services = jwksServices([rsa.jwk]);
    const params = { jwksUri: freshUri(), cacheMaxAge: 0 };
    for (let i = 0; i < 2; i++) {
      expect(
        (await runCheck('jwt', onRequest('hi', bearer(await token(rsa))), params, services)).verdict,
      ).toBe(true);
    }
    expect(services.gets).toHaveLength(2);
  });

  it('errs when the set cannot be had: a status other than 200, or an answer that is not a key set', async () => {
    const t = await token(rsa);
    const down = fakeServices({ get: () => ({ status: 503, body: undefined }) });
    await expect(runCheck('jwt', onRequest('hi', bearer(t)), { jwksUri: freshUri() }, down)).rejects.toThrow(
      /503/,
    );
    const junk = fakeServices({ get: () => ({ status: 200, body: { hello: 'world' } }) });
    await expect(runCheck('jwt', onRequest('hi', bearer(t)), { jwksUri: freshUri() }, junk)).rejects.toThrow(
      /JWKS/,
    );
  });

  it('verifies against an inline jwks, fetching nothing, and falls back to jwksUri for a key id it lacks', async () => {
    const services = jwksServices([ec.jwk]);
    const jwks = { keys: [rsa.jwk] };
    const algorithms = ['RS256', 'ES256'];
    const inline = await runCheck('jwt', onRequest('hi', bearer(await token(rsa))), { jwks }, services);
    expect(inline).toMatchObject({ verdict: true, explanation: 'JWT token validation succeeded' });
    const missing = await runCheck(
      'jwt',
      onRequest('hi', bearer(await token(ec))),
      { jwks, algorithms },
      services,
    );
    expect(missing).toMatchObject({ verdict: false, explanation: 'No matching key found for kid' });
    expect(services.gets).toEqual([]);
    const jwksUri = freshUri();
    const both = await runCheck(
      'jwt',
      onRequest('hi', bearer(await token(ec))),
      { jwks, jwksUri, algorithms },
      services,
    );
    expect(both.verdict).toBe(true);
    expect(services.gets).toEqual([jwksUri]);
  });

  it('fails a token without kid, as no key is chosen for it', async () => {
    const noKid = await new SignJWT({ sub: 'user-1' })
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuedAt()
      .sign(rsa.key);
    const result = await runCheck(
      'jwt',
      onRequest('hi', bearer(noKid)),
      { jwks: { keys: [rsa.jwk] } },
      fakeServices(),
    );
    expect(result).toMatchObject({ verdict: false, explanation: 'No matching key found for kid' });
  });

  it('checks maxTokenAge only on a token that has an iat', async () => {
    const noIat = await new SignJWT({ sub: 'user-1' })
      .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
      .sign(rsa.key);
    const result = await runCheck(
      'jwt',
      onRequest('hi', bearer(noIat)),
      { jwks: { keys: [rsa.jwk] }, maxTokenAge: '1h' },
      fakeServices(),
    );
    expect(result.verdict).toBe(true);
  });

  it('checks maxTokenAge on a token issued at 0, and fails an iat that is not a number', async () => {
    const jwks = { keys: [rsa.jwk] };
    const atEpoch = await token(rsa, { iat: 0, exp: now() + 60 });
    const old = await runCheck('jwt', onRequest('hi', bearer(atEpoch)), { jwks }, fakeServices());
    expect(old.verdict).toBe(false);
    expect(old.explanation).toMatch(/"iat" claim timestamp check failed/);
    const textual = await new SignJWT({ sub: 'user-1', iat: 'yesterday' as unknown as number })
      .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
      .sign(rsa.key);
    const notANumber = await runCheck('jwt', onRequest('hi', bearer(textual)), { jwks }, fakeServices());
    expect(notANumber.verdict).toBe(false);
    expect(notANumber.explanation).toMatch(/"iat" claim must be a number/);
  });

  it('says a bad signature is a signature error, and a token that is not a JWT a validation error', async () => {
    const jwks = { keys: [rsa.jwk] };
    const forged = await runCheck(
      'jwt',
      onRequest('hi', bearer(await token(other))),
      { jwks },
      fakeServices(),
    );
    expect(forged).toMatchObject({ verdict: false, data: { validations: { signatureValid: false } } });
    expect(forged.explanation).toMatch(/^JWT signature validation error: signature verification failed/);
    const junk = await runCheck('jwt', onRequest('hi', bearer('not-a-jwt')), { jwks }, fakeServices());
    expect(junk.verdict).toBe(false);
    expect(junk.explanation).toMatch(/^JWT validation error: /);
  });

  it('says an expired, early or too old token with a good signature is one, with what is wrong', async () => {
    const jwks = { keys: [rsa.jwk] };
    const run = async (claims: Record<string, unknown>) =>
      runCheck('jwt', onRequest('hi', bearer(await token(rsa, claims))), { jwks }, fakeServices());
    const signatureValid = { validations: { signatureValid: true } };
    expect(await run({ exp: now() - 30 })).toMatchObject({
      verdict: false,
      explanation: 'Token has expired',
      data: signatureValid,
    });
    expect(await run({ nbf: now() + 120 })).toMatchObject({
      verdict: false,
      explanation: 'Token not yet valid',
      data: signatureValid,
    });
    expect(await run({ iat: now() - 2 * 86400 })).toMatchObject({
      verdict: false,
      explanation: 'JWT validation failed: "iat" claim timestamp check failed (too far in the past)',
      data: signatureValid,
    });
    expect(await run({ exp: 'soon' })).toMatchObject({
      verdict: false,
      explanation: 'JWT validation failed: "exp" claim must be a number',
      data: signatureValid,
    });
  });

  it('fails a token missing a requiredClaims claim (absent or null), naming them', async () => {
    const jwks = { keys: [rsa.jwk] };
    const t = await token(rsa, { email: 'a@example.com', tenant_id: null });
    const run = (requiredClaims: string[]) =>
      runCheck('jwt', onRequest('hi', bearer(t)), { jwks, requiredClaims }, fakeServices());
    expect(await run(['sub', 'email'])).toMatchObject({
      verdict: true,
      data: { validations: { signatureValid: true, requiredClaims: { valid: true } } },
    });
    expect(await run(['sub', 'tenant_id', 'groups'])).toMatchObject({
      verdict: false,
      explanation: 'JWT validation failed: Missing required claims: tenant_id, groups',
      data: {
        validations: {
          signatureValid: true,
          requiredClaims: { valid: false, missing: ['tenant_id', 'groups'] },
        },
      },
    });
  });

  it('checks claimValues with each matchType as the reference gateway does', async () => {
    const jwks = { keys: [rsa.jwk] };
    const t = await token(rsa, {
      iss: 'https://auth.example.com',
      aud: ['https://api.example.com', 'https://other.example.com'],
      groups: ['super-admin', 'user'],
      scope: 'read:api write:api',
      email: 'ann@company1.com',
      name: 'Ann Lee',
      level: 3,
    });
    const verdict = async (claimValues: Record<string, unknown>) =>
      (await runCheck('jwt', onRequest('hi', bearer(t)), { jwks, claimValues }, fakeServices())).verdict;
    // exact (the default): one string claim equal to one expected value.
    expect(await verdict({ iss: { values: 'https://auth.example.com' } })).toBe(true);
    expect(await verdict({ iss: { values: ['https://auth.example.com'] } })).toBe(true);
    expect(await verdict({ iss: { values: ['https://auth.example.com', 'https://b.example.com'] } })).toBe(
      false,
    );
    expect(await verdict({ aud: { values: 'https://api.example.com' } })).toBe(false);
    expect(await verdict({ name: { values: 'Ann Lee', matchType: 'exact' } })).toBe(true);
    expect(await verdict({ level: { values: 3 } })).toBe(true);
    // contains: any expected value is a substring of any value of the claim.
    expect(await verdict({ aud: { values: 'https://api.example.com', matchType: 'contains' } })).toBe(true);
    expect(await verdict({ groups: { values: ['admin', 'moderator'], matchType: 'contains' } })).toBe(true);
    expect(await verdict({ groups: { values: ['moderator'], matchType: 'contains' } })).toBe(false);
    // containsAll: every expected value is found; a string scope is split at spaces, other strings are not.
    expect(await verdict({ scope: { values: ['read:api', 'write:api'], matchType: 'containsAll' } })).toBe(
      true,
    );
    expect(await verdict({ scope: { values: ['read:api', 'admin:api'], matchType: 'containsAll' } })).toBe(
      false,
    );
    expect(await verdict({ scope: { values: 'read:api write:api', matchType: 'exact' } })).toBe(false);
    expect(await verdict({ name: { values: 'Ann Lee' } })).toBe(true);
    // regex: any pattern matches (anywhere) any value of the claim.
    expect(await verdict({ email: { values: '.*@(company1|company2)\\.com$', matchType: 'regex' } })).toBe(
      true,
    );
    expect(await verdict({ email: { values: ['@other\\.com$', '^ann@'], matchType: 'regex' } })).toBe(true);
    expect(await verdict({ email: { values: '@other\\.com$', matchType: 'regex' } })).toBe(false);
    const failed = await runCheck(
      'jwt',
      onRequest('hi', bearer(t)),
      {
        jwks,
        claimValues: {
          tenant_id: { values: 'x' },
          groups: { values: 'admin' },
          iss: { values: 'https://auth.example.com' },
        },
      },
      fakeServices(),
    );
    expect(failed).toMatchObject({
      verdict: false,
      explanation: 'JWT validation failed: Invalid claim values: tenant_id (missing), groups',
      data: { validations: { claimValues: { valid: false, failed: ['tenant_id (missing)', 'groups'] } } },
    });
  });

  it('checks headerPayloadMatch, and joins every failure in one explanation', async () => {
    const jwks = { keys: [rsa.jwk] };
    const t = await token(rsa, { kid: 'rsa-1', alg: 'HS256' });
    const run = (p: Record<string, unknown>) =>
      runCheck('jwt', onRequest('hi', bearer(t)), { jwks, ...p }, fakeServices());
    expect((await run({ headerPayloadMatch: ['kid'] })).verdict).toBe(true);
    const both = await run({ headerPayloadMatch: ['kid', 'alg'], requiredClaims: ['email'] });
    expect(both).toMatchObject({
      verdict: false,
      explanation: 'JWT validation failed: Missing required claims: email; Header-payload mismatch: alg',
      data: { validations: { headerPayloadMatch: { valid: false, mismatched: ['alg'] } } },
    });
  });

  it('gives the extractClaims of a token that passed in data.extractedClaims, named with claimPrefix', async () => {
    const jwks = { keys: [rsa.jwk] };
    const t = await token(rsa, {
      email: 'ann@example.com',
      tenant_id: 'tenant-456',
      groups: ['admin', 'developer'],
      org: { id: 7, name: 'Acme' },
      level: 3,
      admin: false,
      gone: null,
    });
    const run = (p: Record<string, unknown>) =>
      runCheck('jwt', onRequest('hi', bearer(t)), { jwks, ...p }, fakeServices());
    const extractClaims = ['sub', 'email', 'tenant_id', 'groups', 'org', 'level', 'admin', 'gone', 'absent'];
    const passed = await run({ extractClaims });
    expect(passed).toMatchObject({ verdict: true, explanation: 'JWT token validation succeeded' });
    // As the reference gateway formats them: an array's items joined with commas, an object as JSON, the
    // rest as strings; a claim absent or null is left out.
    expect((passed.data as { extractedClaims: unknown }).extractedClaims).toEqual({
      'x-jwt-sub': 'user-1',
      'x-jwt-email': 'ann@example.com',
      'x-jwt-tenant_id': 'tenant-456',
      'x-jwt-groups': 'admin,developer',
      'x-jwt-org': '{"id":7,"name":"Acme"}',
      'x-jwt-level': '3',
      'x-jwt-admin': 'false',
    });
    // Nothing is sent on: the request body is untouched.
    expect(passed.transformed).toBeUndefined();
    const prefixed = await run({ extractClaims: ['sub'], claimPrefix: 'x-user-' });
    expect((prefixed.data as { extractedClaims: unknown }).extractedClaims).toEqual({
      'x-user-sub': 'user-1',
    });
    // Only a token that passed gives its claims.
    const failed = await run({ extractClaims: ['sub'], requiredClaims: ['tenant'] });
    expect(failed.verdict).toBe(false);
    expect(failed.data).not.toHaveProperty('extractedClaims');
    const forged = await runCheck(
      'jwt',
      onRequest('hi', bearer(await token(other))),
      { jwks, extractClaims: ['sub'] },
      fakeServices(),
    );
    expect(forged.data).not.toHaveProperty('extractedClaims');
    expect((await run({})).data).not.toHaveProperty('extractedClaims');
  });

  it('extracts the claims an introspection answers, never the token itself', async () => {
    const opaque = 'opaque-token-extract-1';
    const services = fakeServices({
      post: () => ({
        status: 200,
        body: { active: true, sub: 'u9', scope: 'read write', echoed: `token=${opaque}`, list: [opaque] },
      }),
    });
    const result = await runCheck(
      'jwt',
      onRequest('hi', bearer(opaque)),
      {
        introspectEndpoint: 'https://idp.example.com/introspect-extract',
        extractClaims: ['sub', 'scope', 'echoed', 'list', '__proto__', 'constructor'],
      },
      services,
    );
    expect(result.verdict).toBe(true);
    expect((result.data as { extractedClaims: unknown }).extractedClaims).toEqual({
      'x-jwt-sub': 'u9',
      'x-jwt-scope': 'read write',
      'x-jwt-echoed': 'token=[REDACTED]',
      'x-jwt-list': '[REDACTED]',
    });
    expect(JSON.stringify(result)).not.toContain(opaque);
  });

  it('asks introspectEndpoint instead of a key set, and judges the claims it answers', async () => {
    const answers: Array<{ status: number; body: unknown }> = [];
    const services = fakeServices({ post: () => answers.shift()! });
    const introspectEndpoint = 'https://idp.example.com/introspect';
    const ctx = () => onRequest('hi', bearer('opaque-token-1'));
    const run = (extra: Record<string, unknown> = {}) =>
      runCheck('jwt', ctx(), { introspectEndpoint, jwksUri: freshUri(), ...extra }, services);
    answers.push({ status: 200, body: { active: true, sub: 'u1', exp: now() + 60, groups: ['admin'] } });
    const good = await run({
      requiredClaims: ['sub'],
      claimValues: { groups: { values: 'admin', matchType: 'contains' } },
    });
    expect(good).toMatchObject({ verdict: true, explanation: 'JWT token validation succeeded' });
    expect(services.posts.at(-1)).toMatchObject({
      url: introspectEndpoint,
      body: { token: 'opaque-token-1' },
    });
    expect(services.gets).toEqual([]);
    answers.push({ status: 200, body: { active: true, sub: 'u1' } });
    expect(await run({ requiredClaims: ['email'] })).toMatchObject({
      verdict: false,
      explanation: 'JWT validation failed: Missing required claims: email',
    });
    answers.push({ status: 200, body: { active: false, sub: 'u1' } });
    expect(await run()).toMatchObject({
      verdict: false,
      explanation: 'Token validation failed',
      data: { validations: { signatureValid: false } },
    });
    // Without active, valid: true or a sub says the token is good.
    answers.push(
      { status: 200, body: { valid: true } },
      { status: 200, body: { sub: 'u2' } },
      { status: 200, body: {} },
    );
    expect((await run()).verdict).toBe(true);
    expect((await run()).verdict).toBe(true);
    expect((await run()).verdict).toBe(false);
    answers.push({ status: 401, body: undefined });
    expect(await run()).toMatchObject({
      verdict: false,
      explanation: 'Endpoint validation failed with status 401',
    });
    answers.push({ status: 200, body: { active: true, exp: now() - 30 } });
    expect(await run()).toMatchObject({ verdict: false, explanation: 'Token has expired' });
    answers.push({ status: 200, body: { active: true, exp: now() - 30 } });
    expect((await run({ clockTolerance: '1m' })).verdict).toBe(true);
    answers.push({ status: 200, body: { active: true, nbf: now() + 120 } });
    expect(await run()).toMatchObject({ verdict: false, explanation: 'Token not yet valid' });
  });

  it('judges an introspected exp or nbf of 0 as a time, and fails one that is not a number', async () => {
    const answers: unknown[] = [];
    const services = fakeServices({ post: () => ({ status: 200, body: answers.shift() }) });
    const run = () =>
      runCheck(
        'jwt',
        onRequest('hi', bearer('opaque-token-2')),
        { introspectEndpoint: 'https://idp.example.com/introspect-times' },
        services,
      );
    answers.push({ active: true, exp: 0 });
    expect(await run()).toMatchObject({ verdict: false, explanation: 'Token has expired' });
    answers.push({ active: true, exp: 'soon' });
    expect(await run()).toMatchObject({
      verdict: false,
      explanation: 'Token validation failed: "exp" claim must be a number',
      data: { validations: { signatureValid: false } },
    });
    answers.push({ active: true, nbf: 'later' });
    expect(await run()).toMatchObject({
      verdict: false,
      explanation: 'Token validation failed: "nbf" claim must be a number',
    });
    answers.push({ active: true, exp: String(now() + 60) });
    expect((await run()).verdict).toBe(false);
    // nbf 0 is long past; a null time is no time.
    answers.push({ active: true, nbf: 0, exp: null });
    expect((await run()).verdict).toBe(true);
  });

  it('keeps good introspection answers for introspectCacheMaxAge, never past the token exp', async () => {
    const exp = now() + 100;
    const services = fakeServices({ post: () => ({ status: 200, body: { active: true, exp } }) });
    const params = {
      introspectEndpoint: 'https://idp.example.com/introspect-cached',
      introspectCacheMaxAge: 300,
    };
    const run = (t: string) => runCheck('jwt', onRequest('hi', bearer(t)), params, services);
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    try {
      expect((await run('tok-a')).verdict).toBe(true);
      expect((await run('tok-a')).verdict).toBe(true);
      expect(services.posts).toHaveLength(1);
      expect((await run('tok-b')).verdict).toBe(true);
      expect(services.posts).toHaveLength(2);
      // Past the token's exp (100 s, and 5 s of tolerance), the kept answer is not used.
      vi.setSystemTime(Date.now() + 110_000);
      vi.advanceTimersByTime(110_000);
      expect(await run('tok-a')).toMatchObject({ verdict: false, explanation: 'Token has expired' });
      expect(services.posts).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
    // Without introspectCacheMaxAge, each check asks.
    const uncached = fakeServices({ post: () => ({ status: 200, body: { active: true } }) });
    for (let i = 0; i < 2; i++) {
      await runCheck(
        'jwt',
        onRequest('hi', bearer('tok-c')),
        { introspectEndpoint: 'https://idp.example.com/i' },
        uncached,
      );
    }
    expect(uncached.posts).toHaveLength(2);
  });

  it('reads a kept introspection answer by the reading check’s introspectCacheMaxAge, not the storing one’s', async () => {
    let active = true;
    const services = fakeServices({ post: () => ({ status: 200, body: { active, sub: 'u1' } }) });
    const introspectEndpoint = 'https://idp.example.com/introspect-shared';
    const run = (introspectCacheMaxAge: number) =>
      runCheck(
        'jwt',
        onRequest('hi', bearer('tok-shared')),
        { introspectEndpoint, introspectCacheMaxAge },
        services,
      );
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    try {
      expect((await run(3600)).verdict).toBe(true);
      // The endpoint revokes the token; a check keeping answers 1 s must not take the hour-long one's.
      active = false;
      vi.setSystemTime(Date.now() + 1500);
      vi.advanceTimersByTime(1500);
      expect(await run(1)).toMatchObject({ verdict: false, explanation: 'Token validation failed' });
      expect(services.posts).toHaveLength(2);
      // The answer saying the token is no longer good dropped the kept one, for every config.
      expect((await run(3600)).verdict).toBe(false);
      expect(services.posts).toHaveLength(3);
      // An answer kept 1.5 s ago is still young enough for a check keeping answers an hour.
      active = true;
      expect((await run(1)).verdict).toBe(true);
      active = false;
      vi.setSystemTime(Date.now() + 1500);
      vi.advanceTimersByTime(1500);
      expect((await run(3600)).verdict).toBe(true);
      expect(services.posts).toHaveLength(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it('ages a kept introspection answer by a monotonic clock, not the wall clock that may step back', async () => {
    const services = fakeServices({ post: () => ({ status: 200, body: { active: true, sub: 'u1' } }) });
    const run = () =>
      runCheck(
        'jwt',
        onRequest('hi', bearer('tok-stepped')),
        { introspectEndpoint: 'https://idp.example.com/introspect-stepped', introspectCacheMaxAge: 1 },
        services,
      );
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    try {
      expect((await run()).verdict).toBe(true);
      expect(services.posts).toHaveLength(1);
      // Two seconds pass, and the wall clock is then set back an hour (an NTP step): the answer is 2 s old.
      vi.advanceTimersByTime(2000);
      vi.setSystemTime(Date.now() - 3_600_000);
      expect((await run()).verdict).toBe(true);
      expect(services.posts).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('validates its parameters with the config', () => {
    const ok = { jwksUri: 'https://idp.example.com/jwks.json' };
    expect(checkParameterError('default.jwt', ok, 'beforeRequestHook')).toBeNull();
    expect(
      checkParameterError(
        'default.jwt',
        { ...ok, headerKey: 'X-Token', cacheMaxAge: 60, clockTolerance: 0, maxTokenAge: '2h' },
        'beforeRequestHook',
      ),
    ).toBeNull();
    const param = (p: Record<string, unknown>) =>
      checkParameterError('default.jwt', p, 'beforeRequestHook')?.param;
    expect(param({})).toBe('parameters.jwksUri');
    expect(param({ jwksUri: 'ftp://idp.example.com/jwks' })).toBe('parameters.jwksUri');
    expect(param({ jwksUri: 'https://u:p@idp.example.com/jwks' })).toBe('parameters.jwksUri');
    expect(param({ ...ok, headerKey: 'bad header' })).toBe('parameters.headerKey');
    expect(param({ ...ok, maxTokenAge: 'soon' })).toBe('parameters.maxTokenAge');
    expect(param({ ...ok, cacheMaxAge: -1 })).toBe('parameters.cacheMaxAge');
    expect(param({ ...ok, clockTolerance: -5 })).toBe('parameters.clockTolerance');
    // As the reference gateway reads it: no list, so RS256.
    expect(param({ ...ok, algorithms: [] })).toBeUndefined();
    expect(param({ ...ok, algorithms: ['none'] })).toMatch(/^parameters\.algorithms/);
    // A key set is public: a symmetric key in one would let anyone sign.
    expect(param({ ...ok, algorithms: ['HS256'] })).toMatch(/^parameters\.algorithms/);
    expect(param({ ...ok, audience: 'x' })).toBe('parameters.audience');
    const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: 'a', y: 'b', kid: 'k' }] };
    expect(param({ jwks: { keys: [] } })).toBeUndefined();
    expect(
      param({
        ...ok,
        requiredClaims: ['sub'],
        headerPayloadMatch: ['kid'],
        extractClaims: ['sub'],
        claimPrefix: 'x-',
      }),
    ).toBeUndefined();
    expect(
      param({ ...ok, claimValues: { iss: { values: 'a' }, n: { values: [1, 'b'], matchType: 'contains' } } }),
    ).toBeUndefined();
    expect(param({ jwks: 'https://idp.example.com/jwks.json' })).toBe('parameters.jwks');
    expect(param({ jwks: { keys: 'x' } })).toMatch(/^parameters\.jwks/);
    // A symmetric key would sit in the config as a secret, and is refused as HS* algorithms are.
    expect(param({ jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'k' }] } })).toMatch(/^parameters\.jwks/);
    expect(param({ ...ok, jwks })).toBe('parameters.jwks');
    expect(param({ jwks: { keys: [rsa.jwk, ec.jwk] }, algorithms: ['RS256', 'ES256'] })).toBeUndefined();
    // A key no allowed algorithm takes, one that cannot be imported, or an RSA key shorter than 2048 bits
    // (which jose refuses) would verify nothing.
    const short = {
      ...generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' }),
      kid: 'short',
    };
    expect(param({ jwks: { keys: [rsa.jwk, short] } })).toBe('parameters.jwks.keys[1]');
    expect(
      checkParameterError('default.jwt', { jwks: { keys: [short] } }, 'beforeRequestHook')?.message,
    ).toMatch(/1024 bits/);
    // A key no allowed algorithm takes is passed over, as jose passes it over (an identity provider's set
    // often holds an encryption key beside its signing keys); a set with no key they take verifies nothing.
    expect(param({ jwks: { keys: [rsa.jwk, ec.jwk] } })).toBeUndefined();
    expect(param({ jwks: { keys: [rsa.jwk, { ...rsa.jwk, use: 'enc', kid: 'enc' }] } })).toBeUndefined();
    expect(param({ jwks: { keys: [ec.jwk] } })).toBe('parameters.jwks');
    expect(param({ jwks: { keys: [{ ...rsa.jwk, alg: 'PS256' }] } })).toBe('parameters.jwks');
    expect(param({ jwks: { keys: [{ ...rsa.jwk, use: 'enc' }] } })).toBe('parameters.jwks');
    expect(param({ jwks: { keys: [{ ...ec.jwk, x: 'a' }] }, algorithms: ['ES256'] })).toBe(
      'parameters.jwks.keys[0]',
    );
    // A private key pasted in place of its public half is a secret in the config, and verifies nothing.
    for (const privateMember of ['d', 'p', 'q', 'dp', 'dq', 'qi']) {
      expect(param({ jwks: { keys: [{ ...rsa.jwk, [privateMember]: 'c2VjcmV0' }] } }), privateMember).toBe(
        'parameters.jwks',
      );
    }
    expect(param({ ...ok, requiredClaims: 'sub' })).toBe('parameters.requiredClaims');
    expect(param({ ...ok, claimValues: { iss: { values: 'a', matchType: 'startsWith' } } })).toMatch(
      /^parameters\.claimValues/,
    );
    expect(param({ ...ok, claimValues: { iss: 'a' } })).toMatch(/^parameters\.claimValues/);
    expect(param({ ...ok, claimValues: { email: { values: ['ok', '(?=x)'], matchType: 'regex' } } })).toBe(
      'parameters.claimValues.email.values',
    );
    const introspection = {
      introspectEndpoint: 'https://idp.example.com/introspect',
      introspectContentType: 'application/json',
      introspectCacheMaxAge: 300,
    };
    expect(param(introspection)).toBeUndefined();
    expect(param({ introspectEndpoint: 'ftp://idp.example.com/introspect' })).toBe(
      'parameters.introspectEndpoint',
    );
    expect(param({ ...introspection, introspectCacheMaxAge: -1 })).toBe('parameters.introspectCacheMaxAge');
    expect(checkParameterError('default.jwt', ok, 'afterRequestHook')?.param).toBe('id');
  });
});

describe('default.jwt through the gateway', () => {
  let idp: Server;
  let base: string;
  const seen: string[] = [];
  let gateway: TestGateway;
  let fake: FakeUpstream;

  beforeAll(async () => {
    idp = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/jwks') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [rsa.jwk] }));
      } else if (req.url === '/jwks-twice') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ keys: [other.jwk, rsa.jwk] }));
      } else if (req.url === '/jwks-mixed') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ keys: [rsa.jwk, ec.jwk] }));
      } else if (req.url === '/jwks-slow') {
        // Answers at once the first time, then only after the check's timeout has passed.
        const answer = () =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [rsa.jwk] }));
        if (seen.filter((s) => s === 'GET /jwks-slow').length === 1) answer();
        else setTimeout(answer, 3000);
      } else if (req.url === '/jwks-hanging') {
        // Answers the first time, then never (until the connection is closed).
        if (seen.filter((s) => s === 'GET /jwks-hanging').length === 1) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [rsa.jwk] }));
        }
      } else if (req.url === '/introspect') {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          const { token: sent } = JSON.parse(body) as { token: string };
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify(sent === 'good-opaque' ? { active: true, sub: 'u1' } : { active: false }));
        });
      } else if (req.url === '/moved') {
        res.writeHead(302, { location: '/jwks' }).end();
      } else if (req.url === '/huge') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(`{"keys":[],"x":"${'a'.repeat(2 << 20)}"}`);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'jwt' })]);
  });

  afterAll(async () => {
    idp?.closeAllConnections();
    await Promise.all([gateway?.close(), fake?.close(), new Promise((resolve) => idp?.close(resolve))]);
  });

  type Check = { verdict: boolean; explanation: string | null; error: unknown; data: unknown };
  async function checked(
    parameters: Record<string, unknown>,
    headers: Record<string, string>,
  ): Promise<Check> {
    const config = {
      ...target(fake),
      input_guardrails: [{ id: 'auth', 'default.jwt': { on_error: 'fail', ...parameters } }],
    };
    const response = await postChat(
      gateway,
      config,
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      headers,
    );
    const body = (await response.json()) as {
      hook_results: { before_request_hooks: Array<{ checks: Check[] }> };
    };
    return body.hook_results.before_request_hooks[0]!.checks[0]!;
  }

  it('passes a valid token in the Authorization header, and fails a forged one', async () => {
    const good = await checked({ jwksUri: `${base}/jwks` }, { authorization: `Bearer ${await token(rsa)}` });
    expect(good).toMatchObject({ verdict: true, error: null });
    const forged = await checked(
      { jwksUri: `${base}/jwks` },
      { authorization: `Bearer ${await token(other)}` },
    );
    expect(forged).toMatchObject({ verdict: false, error: null });
    expect(seen.filter((s) => s === 'GET /jwks')).toHaveLength(1);
  });

  it('checks claims of a token verified at a loopback jwksUri, and verifies with an inline jwks alone', async () => {
    const t = await token(rsa, { iss: 'https://auth.example.com', groups: ['admin'] });
    const headers = { authorization: `Bearer ${t}` };
    const claimValues = {
      iss: { values: 'https://auth.example.com' },
      groups: { values: 'admin', matchType: 'contains' },
    };
    const pass = await checked({ jwksUri: `${base}/jwks`, requiredClaims: ['sub'], claimValues }, headers);
    expect(pass).toMatchObject({ verdict: true, explanation: 'JWT token validation succeeded', error: null });
    const fail = await checked({ jwksUri: `${base}/jwks`, requiredClaims: ['tenant_id'] }, headers);
    expect(fail).toMatchObject({
      verdict: false,
      explanation: 'JWT validation failed: Missing required claims: tenant_id',
      error: null,
    });
    const before = seen.length;
    const inline = await checked({ jwks: { keys: [rsa.jwk] }, claimValues }, headers);
    expect(inline).toMatchObject({ verdict: true, error: null });
    expect(seen).toHaveLength(before);
  });

  it('takes an ES256 token from a loopback jwksUri only when algorithms lists ES256', async () => {
    const headers = { authorization: `Bearer ${await token(ec)}` };
    const jwksUri = `${base}/jwks-mixed`;
    const refused = await checked({ jwksUri }, headers);
    expect(refused).toMatchObject({ verdict: false, error: null });
    expect(refused.explanation).toMatch(/^JWT signature validation error: /);
    expect(await checked({ jwksUri, algorithms: ['ES256'] }, headers)).toMatchObject({
      verdict: true,
      error: null,
    });
  });

  it('shows the extracted claims in hook_results, and sends none of them to the provider', async () => {
    const t = await token(rsa, { tenant_id: 'tenant-456', groups: ['admin', 'developer'] });
    const result = await checked(
      { jwksUri: `${base}/jwks`, extractClaims: ['sub', 'tenant_id', 'groups'] },
      { authorization: `Bearer ${t}` },
    );
    expect(result).toMatchObject({
      verdict: true,
      error: null,
      data: {
        extractedClaims: {
          'x-jwt-sub': 'user-1',
          'x-jwt-tenant_id': 'tenant-456',
          'x-jwt-groups': 'admin,developer',
        },
      },
    });
    const sent = fake.requests.at(-1)!;
    expect(Object.keys(sent.headers).filter((name) => name.startsWith('x-jwt-'))).toEqual([]);
    expect(JSON.stringify(sent.body)).not.toContain('tenant-456');
  });

  it('verifies with the second of two keys a loopback set holds under one key id', async () => {
    const result = await checked(
      { jwksUri: `${base}/jwks-twice` },
      { authorization: `Bearer ${await token(rsa)}` },
    );
    expect(result).toMatchObject({
      verdict: true,
      explanation: 'JWT token validation succeeded',
      error: null,
    });
  });

  it('asks a loopback introspectEndpoint with the token', async () => {
    const params = { introspectEndpoint: `${base}/introspect`, requiredClaims: ['sub'] };
    const good = await checked(params, { authorization: 'Bearer good-opaque' });
    expect(good).toMatchObject({ verdict: true, error: null });
    const bad = await checked(params, { authorization: 'Bearer bad-opaque' });
    expect(bad).toMatchObject({ verdict: false, explanation: 'Token validation failed', error: null });
    expect(seen.filter((s) => s === 'POST /introspect')).toHaveLength(2);
  });

  it('denies a token of an unknown key id while the set is slow to fetch again, under the default on_error', async () => {
    const guardrail = { jwksUri: `${base}/jwks-slow`, timeout: 1000 };
    const call = async (t: string) => {
      const config = {
        ...target(fake),
        input_guardrails: [{ id: 'auth', deny: true, 'default.jwt': guardrail }],
      };
      const response = await postChat(
        gateway,
        config,
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        { authorization: `Bearer ${t}` },
      );
      const body = (await response.json()) as {
        hook_results: { before_request_hooks: Array<{ verdict: boolean; checks: Check[] }> };
      };
      return { status: response.status, hook: body.hook_results.before_request_hooks[0]! };
    };
    expect((await call(await token(rsa))).hook.checks[0]).toMatchObject({ verdict: true, error: null });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      // Past the cooldown: the made-up key id has the set fetched again, which answers after the timeout.
      vi.setSystemTime(Date.now() + 31_000);
      const forged = await call(await token(other, {}, { kid: 'made-up' }));
      expect(forged.hook.checks[0]).toMatchObject({
        verdict: false,
        explanation: 'No matching key found for kid',
        error: null,
      });
      expect(forged.hook.verdict).toBe(false);
      expect(forged.status).toBe(446);
      expect(seen.filter((s) => s === 'GET /jwks-slow')).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('judges a token by the expired set it keeps while the set hangs past the deadline, under the default on_error', async () => {
    // A timeout is an error, which the default on_error passes: a made-up kid, or a signature no key of the
    // set made, must not pass while the set's host hangs once the set kept is older than cacheMaxAge.
    const guardrail = { jwksUri: `${base}/jwks-hanging`, cacheMaxAge: 60, timeout: 1000 };
    const call = async (t: string) => {
      const config = {
        ...target(fake),
        input_guardrails: [{ id: 'auth', deny: true, 'default.jwt': guardrail }],
      };
      const response = await postChat(
        gateway,
        config,
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        { authorization: `Bearer ${t}` },
      );
      const body = (await response.json()) as {
        hook_results: { before_request_hooks: Array<{ verdict: boolean; checks: Check[] }> };
      };
      return { status: response.status, hook: body.hook_results.before_request_hooks[0]! };
    };
    expect((await call(await token(rsa))).hook.checks[0]).toMatchObject({ verdict: true, error: null });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 61_000);
      // `other` signs under rsa's key id: a known key id, a signature that key did not make.
      for (const forgedToken of [await token(other, {}, { kid: 'made-up' }), await token(other)]) {
        const forged = await call(forgedToken);
        // Judged before the timeout: no error.
        expect(forged.hook.checks[0]).toMatchObject({ verdict: false, error: null });
        expect(forged.hook.verdict).toBe(false);
        expect(forged.status).toBe(446);
      }
      // The set kept goes on verifying the tokens of its keys.
      const good = await call(await token(rsa));
      expect(good.hook.checks[0]).toMatchObject({ verdict: true, error: null });
      expect(good.status).toBe(200);
      // One fetch, still under way, for them all.
      expect(seen.filter((s) => s === 'GET /jwks-hanging')).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses with a 400 an inline jwks holding an RSA key shorter than 2048 bits, naming the key', async () => {
    const short = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
    const config = {
      ...target(fake),
      input_guardrails: [
        { id: 'auth', 'default.jwt': { jwks: { keys: [rsa.jwk, { ...short, kid: 's' }] } } },
      ],
    };
    const response = await postChat(
      gateway,
      config,
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${await token(rsa)}` },
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string; param: string | null } };
    expect(body.error.param).toBe('config.input_guardrails[0].default.jwt.jwks.keys[1]');
    expect(body.error.message).toMatch(/1024 bits/);
  });

  it('errs when the set is unreachable, redirected or too large', async () => {
    const headers = { 'x-token': await token(rsa) };
    for (const jwksUri of [`${base}/missing`, `${base}/moved`, `${base}/huge`, 'http://127.0.0.1:1/jwks']) {
      const result = await checked({ jwksUri, headerKey: 'x-token' }, headers);
      expect(result.verdict, jwksUri).toBe(false);
      expect(result.error, jwksUri).not.toBeNull();
    }
    // The redirect to /jwks was not followed: the one GET of it is the first test's.
    expect(seen.filter((s) => s === 'GET /jwks')).toHaveLength(1);
  });

  // Cloud metadata and link-local addresses are refused under every policy (docs/settings.md).
  it('errs on a JWKS address the custom-host policy refuses, without calling it', async () => {
    const result = await checked(
      { jwksUri: 'http://169.254.169.254/latest/meta-data/jwks', headerKey: 'x-token' },
      { 'x-token': await token(rsa) },
    );
    expect(result.verdict).toBe(false);
    expect(JSON.stringify(result.error)).toMatch(/jwksUri/);
    expect(seen.some((s) => s.includes('meta-data'))).toBe(false);
  });
});
