/**
 * The partials a render includes are kept by name in a map that every name is a key of: `constructor` and
 * `toString` are slugs, and `__proto__` (which the API refuses as a slug, since one starts with a letter or
 * digit) is not lost when a loader finds a partial by that name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  checkPartialText,
  checkPromptDocument,
  renderPrompt,
} from '../../src/gateway/prompts/render-prompt.js';
import type { PromptDocument } from '../../src/store/types.js';
import { admin, chatTemplate, complete, fakeTarget, lastBody } from './support.js';

const texts = new Map([
  ['__proto__', 'from __proto__ {{>constructor}}'],
  ['constructor', 'and constructor {{who}}'],
  ['toString', 'and toString'],
]);
const load = async (name: string) => {
  const text = texts.get(name);
  return text === undefined ? undefined : { text, record: { name }, id: `ptl_${name}` };
};

const input = {
  variables: { who: 'you' },
  allowUnknownVariables: false,
  overrides: {},
  stream: undefined,
};

describe('partials named as properties every object has', () => {
  it('are included in a text template, when it is stored and called', async () => {
    const prompt = {
      template_type: 'completion',
      string: 'Hi {{>__proto__}}, {{>toString}}',
      parameters: { model: 'gpt-4o-mini' },
    } as unknown as PromptDocument;
    await checkPromptDocument(prompt, load);
    const { request, known } = await renderPrompt({ prompt }, input, load);
    expect((request.body as { prompt: string }).prompt).toBe(
      'Hi from __proto__ and constructor you, and toString',
    );
    expect([...known]).toEqual(['who']);
  });

  it('are included in a chat template', async () => {
    const prompt = {
      template_type: 'chat',
      string: '[{"role":"user","content":"{{>__proto__}}"}]',
      parameters: { model: 'gpt-4o-mini' },
    } as unknown as PromptDocument;
    await checkPromptDocument(prompt, load);
    const { request } = await renderPrompt({ prompt }, input, load);
    expect((request.body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: 'from __proto__ and constructor you' },
    ]);
  });

  it('a partial including one is stored', async () => {
    await expect(checkPartialText({ slug: 'outer' }, '{{>__proto__}}', load)).resolves.toBeUndefined();
  });
});

describe('stored partials named as properties every object has', () => {
  let gateway: TestGateway;
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'partial-names' });
    gateway = await startGateway();
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it('__proto__ is not a slug; constructor is, and is included by a prompt called through the API', async () => {
    const api = admin(gateway);
    const refused = await api.post('/prompts/partials', { slug: '__proto__', string: 'x' });
    expect(refused.status, refused.text).toBe(400);
    expect((refused.body as { error: { param: string } }).error.param).toBe('slug');

    const partial = await api.post('/prompts/partials', { slug: 'constructor', string: 'Be brief.' });
    expect(partial.status, partial.text).toBe(200);
    const prompt = await api.post('/prompts', {
      slug: 'constructor-user',
      string: chatTemplate('{{>constructor}}', '{{q}}'),
      parameters: { model: 'gpt-4o-mini' },
      config: fakeTarget(fake),
    });
    expect(prompt.status, prompt.text).toBe(200);
    const reply = await complete(gateway, 'constructor-user', { variables: { q: 'x' } });
    expect(reply.status, reply.text).toBe(200);
    expect((lastBody(fake).messages as Array<{ content: string }>)[0].content).toBe('Be brief.');
  });
});
