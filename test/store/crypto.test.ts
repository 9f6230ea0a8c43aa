import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import {
  decryptSecret,
  deriveKeys,
  encryptSecret,
  hashApiKeyValue,
  loadMasterKey,
  parseMasterKey,
} from '../../src/store/crypto.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-key-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('loadMasterKey', () => {
  it('reads 64 hex characters', () => {
    const key = randomBytes(32);
    expect(loadMasterKey({ GATEWAY_MASTER_KEY: key.toString('hex') }, tempDir())).toEqual(key);
  });

  it('reads base64 and base64url of 32 bytes', () => {
    const key = randomBytes(32);
    expect(loadMasterKey({ GATEWAY_MASTER_KEY: key.toString('base64') }, tempDir())).toEqual(key);
    expect(loadMasterKey({ GATEWAY_MASTER_KEY: key.toString('base64url') }, tempDir())).toEqual(key);
  });

  it('stretches any other string into a stable 32-byte key', () => {
    const a = parseMasterKey('correct horse battery staple');
    expect(a).toHaveLength(32);
    expect(parseMasterKey('correct horse battery staple')).toEqual(a);
    expect(parseMasterKey('correct horse battery stapler')).not.toEqual(a);
    // Base64 of a length other than 32 bytes is a passphrase too, not a truncated key.
    expect(parseMasterKey(randomBytes(16).toString('base64'))).toHaveLength(32);
  });

  it('creates <dataDir>/master.key with mode 0600 once and reuses it', () => {
    const dir = join(tempDir(), 'nested');
    const first = loadMasterKey({}, dir);
    const path = join(dir, 'master.key');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8').trim()).toBe(first.toString('hex'));
    expect(loadMasterKey({}, dir)).toEqual(first);
  });

  it('refuses a damaged key file instead of replacing it', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'master.key'), 'not a key\n');
    expect(() => loadMasterKey({}, dir)).toThrow(GatewayError);
  });

  it('requires the key to be given when DATABASE_URL is set', () => {
    const dir = tempDir();
    expect(() => loadMasterKey({ DATABASE_URL: 'postgres://x@127.0.0.1/db' }, dir)).toThrow(
      /GATEWAY_MASTER_KEY/,
    );
  });
});

describe('encryptSecret / decryptSecret', () => {
  const { encryption } = deriveKeys(randomBytes(32));

  it('round-trips with a fresh IV each time', () => {
    const a = encryptSecret(encryption, 'sk-secret', 'row-1');
    const b = encryptSecret(encryption, 'sk-secret', 'row-1');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]+$/);
    expect(decryptSecret(encryption, a, 'row-1')).toBe('sk-secret');
    expect(decryptSecret(encryption, encryptSecret(encryption, 'ünïcödé'), undefined)).toBe('ünïcödé');
  });

  it('rejects tampering, another key, another row and unknown formats', () => {
    const blob = encryptSecret(encryption, 'sk-secret', 'row-1');
    const [v, iv, tag, ct] = blob.split(':');
    const flipped = Buffer.from(ct, 'base64url');
    flipped[0] ^= 1;
    expect(() =>
      decryptSecret(encryption, [v, iv, tag, flipped.toString('base64url')].join(':'), 'row-1'),
    ).toThrow(GatewayError);
    expect(() => decryptSecret(deriveKeys(randomBytes(32)).encryption, blob, 'row-1')).toThrow(GatewayError);
    expect(() => decryptSecret(encryption, blob, 'row-2')).toThrow(GatewayError);
    expect(() => decryptSecret(encryption, blob.replace(/^v1/, 'v9'), 'row-1')).toThrow(/unknown format/);
  });
});

describe('deriveKeys / hashApiKeyValue', () => {
  it('derives distinct subkeys and a keyed, deterministic hash', () => {
    const master = randomBytes(32);
    const keys = deriveKeys(master);
    expect(keys.encryption).not.toEqual(keys.apiKeyHash);
    expect(keys.encryption).not.toEqual(master);
    expect(hashApiKeyValue(keys.apiKeyHash, 'gw-abc')).toBe(
      hashApiKeyValue(deriveKeys(master).apiKeyHash, 'gw-abc'),
    );
    expect(hashApiKeyValue(keys.apiKeyHash, 'gw-abc')).not.toBe(
      hashApiKeyValue(deriveKeys(randomBytes(32)).apiKeyHash, 'gw-abc'),
    );
    expect(() => deriveKeys(randomBytes(16))).toThrow(GatewayError);
  });
});
