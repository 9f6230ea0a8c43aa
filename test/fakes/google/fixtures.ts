// The recorded Gemini wire samples of provider-fixtures/google (and google-vertex), read for the fakes and tests.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { openAPIDocumentPath } from '../../helpers/openapi.js';

export function googleFixtureDir(folder: 'google' | 'google-vertex' = 'google'): string {
  return path.join(path.dirname(openAPIDocumentPath()), 'provider-fixtures', folder);
}

/** A whole recorded JSON body. */
export function readGoogleFixture(name: string, folder: 'google' | 'google-vertex' = 'google'): unknown {
  return JSON.parse(readFileSync(path.join(googleFixtureDir(folder), name), 'utf8')) as unknown;
}

/** A recorded stream: the `data:` payload of each event, one per line. */
export function readGoogleStream(name: string): string[] {
  return readFileSync(path.join(googleFixtureDir(), name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

/** Every recorded Gemini `generateContent` stream (the top folder; sub-folders hold other APIs). */
export function listGoogleStreams(): string[] {
  return readdirSync(googleFixtureDir())
    .filter((name) => name.endsWith('.chunks.txt'))
    .sort();
}

/** Frames payloads as the SSE body `streamGenerateContent?alt=sse` sends. */
export function toSse(payloads: string[]): string {
  return payloads.map((data) => `data: ${data}\r\n\r\n`).join('');
}
