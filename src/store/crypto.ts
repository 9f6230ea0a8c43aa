/**
 * The master key and what is derived from it: the AES-256-GCM key that encrypts provider secrets at
 * rest, and the HMAC key under which API key values are hashed. Subkeys are derived with HKDF so a
 * leaked hash key says nothing about the encryption key and vice versa.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, scryptSync } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayError } from '../core/errors.js';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Bump when the format changes; `decryptSecret` keeps reading every older version. */
const FORMAT_V1 = 'v1';
/** Fixed on purpose: a passphrase must derive the same key on every node and after every restart. */
const PASSPHRASE_SALT = 'ai-gateway/master-key/v1';
export const MASTER_KEY_FILE = 'master.key';

/**
 * The master key from `GATEWAY_MASTER_KEY` (64 hex chars, base64 of 32 bytes, or any other string
 * taken as a passphrase and stretched with scrypt). Without it, embedded mode keeps a generated key
 * in `<dataDir>/master.key` (0600). With `DATABASE_URL` set the key must be given: every node must
 * share it, and a file on one node's disk would make the others unable to read the secrets.
 */
export function loadMasterKey(env: NodeJS.ProcessEnv, dataDir: string): Buffer {
  const given = env.GATEWAY_MASTER_KEY?.trim();
  if (given) return parseMasterKey(given);
  if (env.DATABASE_URL) {
    throw new GatewayError(
      'internal_error',
      'GATEWAY_MASTER_KEY must be set when DATABASE_URL is used, so that every node shares the same key',
    );
  }
  return loadOrCreateKeyFile(join(dataDir, MASTER_KEY_FILE));
}

export function parseMasterKey(text: string): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) {
    const bytes = Buffer.from(text, 'base64');
    if (bytes.length === KEY_BYTES) return bytes;
  }
  return scryptSync(text, PASSPHRASE_SALT, KEY_BYTES);
}

function loadOrCreateKeyFile(path: string): Buffer {
  try {
    return parseStoredKey(readFileSync(path, 'utf8'), path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(join(path, '..'), { recursive: true });
  try {
    // 'wx' fails if another process created the file meanwhile; then that file wins.
    writeFileSync(path, `${randomBytes(KEY_BYTES).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return parseStoredKey(readFileSync(path, 'utf8'), path);
}

function parseStoredKey(text: string, path: string): Buffer {
  const hex = text.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new GatewayError('internal_error', `${path} does not hold a 64-character hex key`);
  }
  return Buffer.from(hex, 'hex');
}

/** The keys actually used; derived once per store from the master key. */
export interface StoreKeys {
  encryption: Buffer;
  apiKeyHash: Buffer;
}

export function deriveKeys(masterKey: Buffer): StoreKeys {
  if (masterKey.length !== KEY_BYTES) {
    throw new GatewayError('internal_error', `The master key must be ${KEY_BYTES} bytes`);
  }
  const derive = (info: string) =>
    Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), info, KEY_BYTES));
  return {
    encryption: derive('gateway secret encryption v1'),
    apiKeyHash: derive('gateway api key hash v1'),
  };
}

/**
 * `v1:<iv>:<tag>:<ciphertext>`, each part base64url. `aad` binds the ciphertext to its row (the row
 * id), so a blob copied into another row does not decrypt.
 */
export function encryptSecret(key: Buffer, plaintext: string, aad?: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [FORMAT_V1, b64url(iv), b64url(tag), b64url(ciphertext)].join(':');
}

export function decryptSecret(key: Buffer, encoded: string, aad?: string): string {
  const parts = encoded.split(':');
  if (parts.length !== 4 || parts[0] !== FORMAT_V1) {
    throw new GatewayError('internal_error', 'Stored secret has an unknown format');
  }
  const [, iv, tag, ciphertext] = parts.map((part) => Buffer.from(part, 'base64url'));
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw new GatewayError('internal_error', 'Stored secret has an unknown format');
  }
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch (cause) {
    throw new GatewayError('internal_error', 'Stored secret cannot be decrypted (wrong master key?)', {
      cause,
    });
  }
}

/** Hex HMAC-SHA256 of an API key value; the only form in which key values are stored. */
export function hashApiKeyValue(hashKey: Buffer, value: string): string {
  return createHmac('sha256', hashKey).update(value, 'utf8').digest('hex');
}

function b64url(bytes: Buffer): string {
  return bytes.toString('base64url');
}
