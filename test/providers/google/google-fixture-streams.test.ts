/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Every recorded Gemini stream, replayed through the adapter's decoder and translator: each chunk must be a
// valid OpenAI chunk, and the text, tool calls and usage must equal what the recorded events carry.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { googleAdapter } from '../../../src/providers/google/index.js';
import { vertexAIAdapter } from '../../../src/providers/vertex-ai/index.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';
import { googleFixtureDir, readGoogleStream, toSse } from '../../fakes/google/fixtures.js';
import { assemble, chatRequest, replayStream } from './helpers.js';

/**
 * Streams of the fixture folder that are not `generateContent` streams, left out on purpose:
 * - interactions/*: the Interactions API (stateful agents), a different endpoint the gateway does not call.
 * - speech-translation/*: the Live API over WebSocket (audio), not a chat completion stream.
 */
const OUT_OF_SCOPE = ['interactions', 'speech-translation'];

function allStreams(): string[] {
  const dir = googleFixtureDir();
  const names: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (statSync(path.join(dir, entry)).isDirectory()) {
      if (!OUT_OF_SCOPE.includes(entry)) throw new Error(`unreviewed fixture folder ${entry}`);
      continue;
    }
    if (entry.endsWith('.chunks.txt')) names.push(entry);
  }
  return names.sort();
}

interface Expected {
  text: string;
  toolCalls: Array<{ name: string; args: unknown }>;
  usage:
    | {
        prompt: number;
        completion: number;
        total: number;
        reasoning: number | undefined;
        trafficType: string | undefined;
      }
    | undefined;
}

/** Reads the recorded events directly: answer text, function calls (whole or as partialArgs), last usage. */
function expectedFrom(lines: string[]): Expected {
  const expected: Expected = { text: '', toolCalls: [], usage: undefined };
  let open: { name: string; args: Record<string, unknown> } | undefined;
  for (const line of lines) {
    const event = JSON.parse(line) as {
      candidates?: Array<{ content?: { parts?: Array<Record<string, any>> } }>;
      usageMetadata?: Record<string, any>;
    };
    for (const part of event.candidates?.[0]?.content?.parts ?? []) {
      if (typeof part.text === 'string' && !part.thought) expected.text += part.text;
      const call = part.functionCall as Record<string, any> | undefined;
      if (!call) continue;
      if (call.name) {
        open = { name: call.name, args: call.args ?? {} };
        expected.toolCalls.push(open);
      }
      for (const arg of call.partialArgs ?? []) {
        const keys = (arg.jsonPath as string)
          .slice(2)
          .split(/\.|\[|\]/)
          .filter((k) => k !== '');
        let node: any = open!.args;
        keys.slice(0, -1).forEach((key, i) => {
          node[key] ??= /^\d+$/.test(keys[i + 1]) ? [] : {};
          node = node[key];
        });
        const last = keys[keys.length - 1];
        const value = arg.stringValue ?? arg.numberValue ?? arg.boolValue ?? null;
        node[last] = typeof value === 'string' && typeof node[last] === 'string' ? node[last] + value : value;
      }
    }
    const u = event.usageMetadata;
    if (u?.promptTokenCount !== undefined) {
      expected.usage = {
        prompt: u.promptTokenCount,
        completion: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
        total: u.totalTokenCount,
        reasoning: u.thoughtsTokenCount,
        // Vertex's: which quota served the call (Provisioned Throughput or pay-as-you-go).
        trafficType: u.trafficType,
      };
    }
  }
  return expected;
}

describe('recorded Gemini streams through the google adapter', () => {
  const streams = allStreams();

  it('covers every recorded stream of the folder', () => {
    expect(streams.length).toBeGreaterThanOrEqual(9);
  });

  for (const adapter of [googleAdapter, vertexAIAdapter]) {
    describe(adapter.id, () => {
      it.each(streams)('%s', (name) => {
        const lines = readGoogleStream(name);
        const expected = expectedFrom(lines);
        const req = chatRequest(
          { stream: true, stream_options: { include_usage: true } },
          {
            target: {
              provider: adapter.id,
              api_key: 'k',
              cloudb_project_id: 'p',
              cloudb_region: 'us-central1',
            },
          },
        );
        const outputs = replayStream(adapter, req, toSse(lines));
        expect(outputs.filter((o) => o.type === 'malformed' || o.type === 'error')).toEqual([]);
        const got = assemble(outputs);
        for (const chunk of got.chunks) expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);

        expect(got.text).toBe(expected.text);
        expect(
          got.toolCalls.map((c) => ({ name: c.name, args: JSON.parse(c.arguments) as unknown })),
        ).toEqual(expected.toolCalls);
        for (const call of got.toolCalls) expect(call.id).toMatch(/^call_/);
        expect(got.finishReason).toBe(expected.toolCalls.length > 0 ? 'tool_calls' : 'stop');
        expect(got.done).toBe(true);

        // usage: only on the last chunk, with no choices; absent everywhere else
        const last = got.chunks[got.chunks.length - 1];
        expect(last.choices).toEqual([]);
        expect(got.chunks.slice(0, -1).every((c) => c.usage === undefined || c.usage === null)).toBe(true);
        expect(last.usage).toEqual({
          prompt_tokens: expected.usage!.prompt,
          completion_tokens: expected.usage!.completion,
          total_tokens: expected.usage!.total,
          ...(expected.usage!.reasoning !== undefined
            ? { completion_tokens_details: { reasoning_tokens: expected.usage!.reasoning } }
            : {}),
          ...(expected.usage!.trafficType !== undefined ? { traffic_type: expected.usage!.trafficType } : {}),
        });
        // one response id across the stream
        expect(new Set(got.chunks.map((c) => c.id)).size).toBe(1);
      });
    });
  }
});
