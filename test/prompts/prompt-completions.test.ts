/**
 * Prompt completions through HTTP and the `openai` SDK against a real gateway and a fake provider: version
 * selection, variables rendered literally, partials, strict variables, overrides, the envelope (validated
 * against the OpenAI document), streaming, a fallback config behind a prompt, the log record, and the
 * refusals of bad templates that store nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { addCatalogProvider, call, client, expectError } from '../management/http.js';
import { logsOf, traceHeaders } from '../routing/support.js';
import {
  admin,
  chatTemplate,
  complete,
  fakeTarget,
  lastBody,
  lastUserContent,
  promptClient,
  type Admin,
} from './support.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let api: Admin;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'prompts' });
  gateway = await startGateway();
  api = admin(gateway);
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

async function createPrompt(body: Record<string, unknown>) {
  const created = await api.post('/prompts', {
    parameters: { model: 'gpt-4o-mini' },
    config: fakeTarget(fake),
    ...body,
  });
  expect(created.status, created.text).toBe(200);
  return created.body as { id: string; slug: string; version: number };
}

describe('version selection', () => {
  let id: string;
  beforeAll(async () => {
    ({ id } = await createPrompt({ slug: 'versions', string: chatTemplate('v1', 'Say {{word}}') }));
    for (const system of ['v2', 'v3']) {
      const next = await api.put('/prompts/versions', {
        string: chatTemplate(system, 'Say {{word}}'),
        parameters: { model: 'gpt-4o-mini' },
        config: fakeTarget(fake),
      });
      expect(next.status, next.text).toBe(200);
    }
  });

  const systemSent = () => (lastBody(fake).messages as Array<{ content: string }>)[0].content;

  it('runs the published version without a suffix, the newest with @latest, version n with @n', async () => {
    const published = await complete(gateway, 'versions', { variables: { word: 'hi' } });
    expect(published.status, published.text).toBe(200);
    expect(systemSent()).toBe('v1');
    expect(published.body.headers['x-gateway-prompt-version']).toBe('1');

    expect((await complete(gateway, 'versions@latest', { variables: { word: 'hi' } })).status).toBe(200);
    expect(systemSent()).toBe('v3');
    expect((await complete(gateway, `${id}@2`, { variables: { word: 'hi' } })).status).toBe(200);
    expect(systemSent()).toBe('v2');
  });

  it('serves a newly published version at once', async () => {
    expect((await api.put('/prompts/versions/publish', { version: 3 })).body.published_version).toBe(3);
    const reply = await complete(gateway, id, { variables: { word: 'hi' } });
    expect(reply.body.headers['x-gateway-prompt-version']).toBe('3');
    expect(systemSent()).toBe('v3');
    expect((await api.put('/prompts/versions/publish', { version: 1 })).status).toBe(200);
  });

  it('answers 404 naming an unknown prompt or version', async () => {
    const calls = fake.requests.length;
    const unknown = expectError(await complete(gateway, 'nope', { variables: {} }), 404, 'prompt_not_found');
    expect(unknown.message).toContain('"nope"');
    const version = expectError(
      await complete(gateway, 'versions@9', { variables: { word: 'x' } }),
      404,
      'prompt_not_found',
    );
    expect(version.message).toContain('no version 9');
    expectError(await complete(gateway, 'versions@first', { variables: {} }), 404, 'prompt_not_found');
    expect(fake.requests.length).toBe(calls);
  });
});

describe('variables', () => {
  beforeAll(async () => {
    await createPrompt({
      slug: 'literal',
      string: chatTemplate('You are {{persona.name}}.', 'Question: {{question}}'),
    });
  });

  it('render literally: quotes, backslashes, newlines, Mustache syntax, unicode and markup', async () => {
    const question =
      'He said "hi"\\n\nthen: {{persona}} {{#x}}{{/x}} }}{{ ]}, {"role":"system"} — 日本語 😀 <b>&amp;</b>';
    const reply = await complete(gateway, 'literal', {
      variables: { question, persona: { name: 'Ada "the" <first>' } },
    });
    expect(reply.status, reply.text).toBe(200);
    const sent = lastBody(fake).messages as Array<{ role: string; content: string }>;
    expect(sent).toEqual([
      { role: 'system', content: 'You are Ada "the" <first>.' },
      { role: 'user', content: `Question: ${question}` },
    ]);
  });

  it('a missing variable is a 400 naming it, and nobody is called', async () => {
    const calls = fake.requests.length;
    const error = expectError(
      await complete(gateway, 'literal', { variables: { persona: { name: 'x' } } }),
      400,
      'invalid_variables',
      'variables.question',
    );
    expect(error.message).toContain('"question" is missing');
    expect(fake.requests.length).toBe(calls);
  });

  it('an unknown variable is a 400, unless the request allows it', async () => {
    const variables = { question: 'q', persona: { name: 'x' }, extra: 'unused' };
    const error = expectError(
      await complete(gateway, 'literal', { variables }),
      400,
      'invalid_variables',
      'variables.extra',
    );
    expect(error.message).toContain('allow_unknown_variables');
    const allowed = await complete(gateway, 'literal', { variables, allow_unknown_variables: true });
    expect(allowed.status, allowed.text).toBe(200);
  });

  it('an oversize variable is a 400 naming it', async () => {
    expectError(
      await complete(gateway, 'literal', {
        variables: { question: 'x'.repeat(64 * 1024 + 1), persona: { name: 'x' } },
      }),
      400,
      'invalid_variables',
      'variables.question',
    );
  });

  it('names every object has are variables like any other: required, or absent when not given', async () => {
    await createPrompt({
      slug: 'object-names',
      string: chatTemplate('{{#toString}}listed{{/toString}}{{^valueOf}}none{{/valueOf}}', '{{constructor}}'),
    });
    expectError(
      await complete(gateway, 'object-names', { variables: {} }),
      400,
      'invalid_variables',
      'variables.constructor',
    );
    const reply = await complete(gateway, 'object-names', { variables: { constructor: 'c' } });
    expect(reply.status, reply.text).toBe(200);
    expect(lastBody(fake).messages).toEqual([
      { role: 'system', content: 'none' },
      { role: 'user', content: 'c' },
    ]);
  });

  it('a dotted name the template reads is required to its last name, and named when missing', async () => {
    const calls = fake.requests.length;
    for (const [persona, param] of [
      [{}, 'variables.persona.name'],
      [{ nmae: 'Ada' }, 'variables.persona.name'],
      ['Ada', 'variables.persona.name'],
      [null, 'variables.persona.name'],
    ] as const) {
      const error = expectError(
        await complete(gateway, 'literal', { variables: { question: 'q', persona } }),
        400,
        'invalid_variables',
        param,
      );
      expect(error.message).toContain('"persona.name"');
    }
    // A name every object inherits is not a value given.
    await createPrompt({ slug: 'inherited', string: chatTemplate('S', '{{user.toString}}') });
    expectError(
      await complete(gateway, 'inherited', { variables: { user: {} } }),
      400,
      'invalid_variables',
      'variables.user.toString',
    );
    expect(fake.requests.length).toBe(calls);
    // Given, whatever it holds (null renders as nothing, as it does at the top).
    const reply = await complete(gateway, 'literal', {
      variables: { question: 'q', persona: { name: null } },
    });
    expect(reply.status, reply.text).toBe(200);
    expect((lastBody(fake).messages as Array<{ content: string }>)[0].content).toBe('You are .');
  });

  it('sections loop over lists and skip what is absent', async () => {
    await createPrompt({
      slug: 'sections',
      string: chatTemplate('Rules:{{#rules}} - {{.}}{{/rules}}{{^rules}} none{{/rules}}', '{{q}}'),
    });
    await complete(gateway, 'sections', { variables: { q: 'a', rules: ['be "brief"', 'be kind'] } });
    expect((lastBody(fake).messages as Array<{ content: string }>)[0].content).toBe(
      'Rules: - be "brief" - be kind',
    );
    await complete(gateway, 'sections', { variables: { q: 'a' } });
    expect((lastBody(fake).messages as Array<{ content: string }>)[0].content).toBe('Rules: none');
  });
});

describe('partials', () => {
  it('include the published version, or the one named, and a new published version at once', async () => {
    expect((await api.post('/prompts/partials', { slug: 'tone', string: 'Be {{tone}}.' })).status).toBe(200);
    const template = chatTemplate('{{>tone}} Sign as {{>sig@1}}', '{{q}}');
    expectError(
      await api.post('/prompts', { slug: 'with-partial', string: template, parameters: { model: 'm' } }),
      400,
      'invalid_prompt',
    );
    // A prompt is stored once every partial it names exists.
    expect((await api.post('/prompts/partials', { slug: 'sig', string: 'the "team"' })).status).toBe(200);
    // Included inside a JSON string, its quotes would end it: refused, naming the partial.
    const quoted = expectError(
      await api.post('/prompts', { slug: 'with-partial', string: template, parameters: { model: 'm' } }),
      400,
      'invalid_prompt',
      'partials.sig@1',
    );
    expect(quoted.message).toContain('would close it');
    expect((await api.put('/prompts/partials/sig', { string: 'the \\"team\\"' })).status).toBe(200);
    expect((await api.put('/prompts/partials/sig/publish', { version: 2 })).status).toBe(200);
    await createPrompt({
      slug: 'with-partial',
      string: chatTemplate('{{>tone}} Sign as {{>sig@2}}', '{{q}}'),
    });
    const system = () => (lastBody(fake).messages as Array<{ content: string }>)[0].content;

    expect((await complete(gateway, 'with-partial', { variables: { q: 'x', tone: 'warm' } })).status).toBe(
      200,
    );
    expect(system()).toBe('Be warm. Sign as the "team"');

    // A partial's variables are required like the template's own.
    expectError(
      await complete(gateway, 'with-partial', { variables: { q: 'x' } }),
      400,
      'invalid_variables',
      'variables.tone',
    );

    expect((await api.put('/prompts/partials/tone', { string: 'Be very {{tone}}.' })).body.version).toBe(2);
    await complete(gateway, 'with-partial', { variables: { q: 'x', tone: 'warm' } });
    expect(system()).toBe('Be warm. Sign as the "team"');
    expect((await api.put('/prompts/partials/tone/publish', { version: 2 })).status).toBe(200);
    expect((await api.put('/prompts/partials/sig', { string: 'nobody' })).status).toBe(200);
    await api.put('/prompts/partials/sig/publish', { version: 3 });
    await complete(gateway, 'with-partial', { variables: { q: 'x', tone: 'warm' } });
    expect(system()).toBe('Be very warm. Sign as the "team"');
  });

  it('refuses a cycle between partials, and a partial that does not exist', async () => {
    expect((await api.post('/prompts/partials', { slug: 'loop-a', string: 'a' })).status).toBe(200);
    expect((await api.post('/prompts/partials', { slug: 'loop-b', string: 'b {{>loop-a}}' })).status).toBe(
      200,
    );
    const cycle = expectError(
      await api.put('/prompts/partials/loop-a', { string: 'a {{>loop-b}}' }),
      400,
      'invalid_prompt',
    );
    expect(cycle.message).toContain('{{>loop-a}} → {{>loop-b}} → {{>loop-a}}');
    expect((await api.get('/prompts/partials/loop-a')).body.version).toBe(1);
    // Itself by a version selector, or by its id, is itself too (the version stored would become the
    // latest); and so is a partial that includes it by its id.
    const { id } = (await api.get('/prompts/partials/loop-a')).body as { id: string };
    for (const self of ['{{>loop-a@latest}}', '{{>loop-a@1}}', `{{>${id}}}`, `{{>${id}@latest}}`]) {
      expectError(await api.put('/prompts/partials/loop-a', { string: `a ${self}` }), 400, 'invalid_prompt');
    }
    expect((await api.get('/prompts/partials/loop-a')).body.version).toBe(1);
    expect((await api.put('/prompts/partials/loop-b', { string: `b {{>${id}}}` })).status).toBe(200);
    await api.put('/prompts/partials/loop-b/publish', { version: 2 });
    expectError(
      await api.put('/prompts/partials/loop-a', { string: 'a {{>loop-b}}' }),
      400,
      'invalid_prompt',
    );
    expect((await api.get('/prompts/partials/loop-a')).body.version).toBe(1);
    const missing = expectError(
      await api.post('/prompts', { slug: 'no-partial', string: chatTemplate('{{>ghost}}', 'x') }),
      400,
      'invalid_prompt',
    );
    expect(missing.message).toContain('{{>ghost}}');
  });
});

describe('a partial that prompts include', () => {
  it('is not deleted, nor published in a version that does not fit, unless forced', async () => {
    expect((await api.post('/prompts/partials', { slug: 'footer', string: 'Thanks.' })).status).toBe(200);
    expect(
      (await api.post('/prompts/partials', { slug: 'wrapper', string: 'Note: {{>footer}}' })).status,
    ).toBe(200);
    await createPrompt({ slug: 'uses-footer', string: chatTemplate('{{>footer}}', '{{q}}') });
    await createPrompt({ slug: 'wraps-footer', string: chatTemplate('{{>wrapper}}', '{{q}}') });
    await createPrompt({ slug: 'pins-footer', string: chatTemplate('{{>footer@1}}', '{{q}}') });

    // A quote would close the JSON string the prompts include it in.
    expect((await api.put('/prompts/partials/footer', { string: 'Say "bye".' })).body.version).toBe(2);
    const publish = expectError(
      await api.put('/prompts/partials/footer/publish', { version: 2 }),
      409,
      'conflict',
      'version',
    );
    expect(publish.message).toContain('"uses-footer" (version 1), "wraps-footer" (version 1)');
    expect(publish.message).not.toContain('pins-footer');
    expect(publish.message).toContain('would close it');
    expect((await api.get('/prompts/partials/footer')).body.published_version).toBe(1);
    expect((await complete(gateway, 'wraps-footer', { variables: { q: 'x' } })).status).toBe(200);
    expect((await api.put('/prompts/partials/footer', { string: 'Bye.' })).body.version).toBe(3);
    expect((await api.put('/prompts/partials/footer/publish', { version: 3 })).status).toBe(200);
    const forced = await api.put('/prompts/partials/footer/publish?force=true', { version: 2 });
    expect(forced.status, forced.text).toBe(200);
    expect((await api.put('/prompts/partials/footer/publish', { version: 3 })).status).toBe(200);

    const remove = expectError(await api.delete('/prompts/partials/footer'), 409, 'conflict', 'id');
    expect(remove.message).toContain(
      '"uses-footer" (version 1), "wraps-footer" (version 1), "pins-footer" (version 1)',
    );
    expect((await api.get('/prompts/partials/footer')).status).toBe(200);
    expect((await api.delete('/prompts/partials/footer?force=true')).status).toBe(200);
    expectError(await complete(gateway, 'uses-footer', { variables: { q: 'x' } }), 400, 'invalid_prompt');
  });

  it('takes no new version that would break the prompts that include its latest, unless forced', async () => {
    expect((await api.post('/prompts/partials', { slug: 'newest', string: 'Hi.' })).status).toBe(200);
    await createPrompt({ slug: 'uses-newest', string: chatTemplate('{{>newest@latest}}', '{{q}}') });
    const update = expectError(
      await api.put('/prompts/partials/newest', { string: 'Say "hi".' }),
      409,
      'conflict',
      'string',
    );
    expect(update.message).toContain('"uses-newest" (version 1)');
    expect((await api.get('/prompts/partials/newest')).body.version).toBe(1);
    const forced = await api.put('/prompts/partials/newest?force=true', { string: 'Say "hi".' });
    expect(forced.status, forced.text).toBe(200);
  });

  it('is not published reading other variables than the prompts including it call with, unless forced', async () => {
    expect(
      (await api.post('/prompts/partials', { slug: 'style', string: 'Be brief, {{who}}.' })).status,
    ).toBe(200);
    await createPrompt({ slug: 'withp', string: chatTemplate('{{>style}}', '{{q}}') });
    // Reads `who` itself: the partial's variables are not all it reads.
    await createPrompt({ slug: 'withp-too', string: chatTemplate('{{>style}}', '{{q}} {{who}}') });
    const variables = { q: 'x', who: 'Ada' };
    expect((await complete(gateway, 'withp', { variables })).status).toBe(200);

    // No longer reading `who`: every call sending it would be refused.
    expect((await api.put('/prompts/partials/style', { string: 'Be nice.' })).body.version).toBe(2);
    const dropped = expectError(
      await api.put('/prompts/partials/style/publish', { version: 2 }),
      409,
      'conflict',
      'version',
    );
    expect(dropped.message).toContain('"withp" (version 1)');
    expect(dropped.message).not.toContain('withp-too');
    expect(dropped.message).toContain('"who"');
    expect((await api.get('/prompts/partials/style')).body.published_version).toBe(1);
    expect((await complete(gateway, 'withp', { variables })).status).toBe(200);

    // Requiring a new variable: every call without it would be refused.
    expect((await api.put('/prompts/partials/style', { string: 'Be {{how}}, {{who}}.' })).body.version).toBe(
      3,
    );
    const added = expectError(
      await api.put('/prompts/partials/style/publish', { version: 3 }),
      409,
      'conflict',
      'version',
    );
    expect(added.message).toContain('"withp" (version 1), "withp-too" (version 1)');
    expect(added.message).toContain('"how"');

    // Reading `who` in a section only: no call it takes now is refused after.
    const optional = await api.put('/prompts/partials/style', {
      string: 'Be brief{{#who}}, {{who}}{{/who}}.',
    });
    expect(optional.body.version).toBe(4);
    const publish = await api.put('/prompts/partials/style/publish', { version: 4 });
    expect(publish.status, publish.text).toBe(200);
    expect((await complete(gateway, 'withp', { variables })).status).toBe(200);
    expect((await complete(gateway, 'withp', { variables: { q: 'x' } })).status).toBe(200);

    const forced = await api.put('/prompts/partials/style/publish?force=true', { version: 2 });
    expect(forced.status, forced.text).toBe(200);
    expectError(await complete(gateway, 'withp', { variables }), 400, 'invalid_variables', 'variables.who');
  });

  it('takes no new version reading other variables than the prompts including its latest call with', async () => {
    expect((await api.post('/prompts/partials', { slug: 'style-new', string: 'Hi {{who}}.' })).status).toBe(
      200,
    );
    await createPrompt({ slug: 'withp-latest', string: chatTemplate('{{>style-new@latest}}', '{{q}}') });
    const update = expectError(
      await api.put('/prompts/partials/style-new', { string: 'Hi.' }),
      409,
      'conflict',
      'string',
    );
    expect(update.message).toContain('"withp-latest" (version 1)');
    expect((await api.get('/prompts/partials/style-new')).body.version).toBe(1);
    const call = await complete(gateway, 'withp-latest', { variables: { q: 'x', who: 'Ada' } });
    expect(call.status, call.text).toBe(200);
    const forced = await api.put('/prompts/partials/style-new?force=true', { string: 'Hi.' });
    expect(forced.status, forced.text).toBe(200);
  });

  it('names at most 10 of the prompts that include it', async () => {
    expect((await api.post('/prompts/partials', { slug: 'common', string: 'Hi.' })).status).toBe(200);
    for (let i = 0; i < 12; i++) {
      await createPrompt({ slug: `common-${i}`, string: chatTemplate('{{>common}}', '{{q}}') });
    }
    const remove = expectError(await api.delete('/prompts/partials/common'), 409, 'conflict', 'id');
    expect(remove.message).toContain('"common-9" (version 1) and 2 more');
    expect(remove.message).not.toContain('common-10');
  });
});

describe('partials with line breaks', () => {
  it('send a line break typed inside a JSON string as the line break of that text', async () => {
    const rules = 'Rules:\n{{#rules}}\n- {{.}}\n{{/rules}}\nBe\tbrief.';
    expect((await api.post('/prompts/partials', { slug: 'multiline', string: rules })).status).toBe(200);
    const message = '{"role": "system",\n  "content": "Line one.\nLine two."}';
    expect((await api.post('/prompts/partials', { slug: 'message', string: message })).status).toBe(200);
    await createPrompt({
      slug: 'line-breaks',
      string: '[\n  {{>message}},\n  {"role": "user", "content": "{{>multiline}}\n{{q}}"}\n]',
    });
    const reply = await complete(gateway, 'line-breaks', { variables: { q: 'x', rules: ['a', 'b'] } });
    expect(reply.status, reply.text).toBe(200);
    expect(lastBody(fake).messages).toEqual([
      { role: 'system', content: 'Line one.\nLine two.' },
      { role: 'user', content: 'Rules:\n- a\n- b\nBe\tbrief.\nx' },
    ]);
  });
});

describe('partials that multiply', () => {
  it('are read once however often they are included, and a render past the limit is refused', async () => {
    // Each level includes the one below twice: twice-24 is 2^24 copies of the text, a gigabyte.
    expect((await api.post('/prompts/partials', { slug: 'twice-0', string: 'x'.repeat(64) })).status).toBe(
      200,
    );
    for (let level = 1; level <= 24; level++) {
      const below = `{{>twice-${level - 1}}}`;
      const stored = await api.post('/prompts/partials', { slug: `twice-${level}`, string: below + below });
      expect(stored.status, stored.text).toBe(200);
    }
    const tooLarge = expectError(
      await api.post('/prompts', { slug: 'huge', template_type: 'completion', string: '{{>twice-24}}' }),
      400,
      'invalid_prompt',
      'string',
    );
    expect(tooLarge.message).toContain(`more than ${4 * 1024 * 1024} characters`);

    // 64 KiB a copy: a list of variables decides how large it gets.
    await createPrompt({
      slug: 'per-item',
      template_type: 'completion',
      string: '{{#items}}{{>twice-10}}{{/items}}',
    });
    const rendered = await api.post('/prompts/per-item/render', { variables: { items: [1, 2] } });
    expect(rendered.status, rendered.text).toBe(200);
    expect(rendered.body.body.prompt).toHaveLength(2 * 64 * 1024);
    const calls = fake.requests.length;
    expectError(
      await complete(gateway, 'per-item', { variables: { items: Array.from({ length: 100 }, () => 1) } }),
      400,
      'invalid_variables',
      'variables',
    );
    expect(fake.requests.length).toBe(calls);
  });
});

describe('partials and sections that repeat without writing', () => {
  it('are refused by their steps when stored and when called, however little they write', async () => {
    // Each level includes the one below twice, ending in a comment: 2^30 inclusions writing nothing.
    expect((await api.post('/prompts/partials', { slug: 'quiet-0', string: '{{! nothing }}' })).status).toBe(
      200,
    );
    for (let level = 1; level <= 30; level++) {
      const below = `{{>quiet-${level - 1}}}`;
      const stored = await api.post('/prompts/partials', { slug: `quiet-${level}`, string: below + below });
      expect(stored.status, stored.text).toBe(200);
    }
    const refused = expectError(
      await api.post('/prompts', { slug: 'quiet', string: chatTemplate('{{>quiet-30}}', 'x') }),
      400,
      'invalid_prompt',
      'string',
    );
    expect(refused.message).toContain('more than 1000000 steps');
    expectError(await api.get('/prompts/quiet'), 404, 'prompt_not_found');

    await createPrompt({
      slug: 'items-tags',
      string: '[{"role":"user","content":"{{#items}}{{#tags}}{{tag}}{{/tags}}{{/items}}"}]',
    });
    const list = Array.from({ length: 8000 }, () => 0);
    const calls = fake.requests.length;
    expectError(
      await complete(gateway, 'items-tags', { variables: { items: list, tags: list } }),
      400,
      'invalid_variables',
      'variables',
    );
    expect(fake.requests.length).toBe(calls);
  });
});

describe('partials inside partials', () => {
  it('nest at most 32 deep', async () => {
    expect((await api.post('/prompts/partials', { slug: 'nest-0', string: 'core' })).status).toBe(200);
    for (let level = 1; level < 32; level++) {
      const stored = await api.post('/prompts/partials', {
        slug: `nest-${level}`,
        string: `{{>nest-${level - 1}}}`,
      });
      expect(stored.status, stored.text).toBe(200);
    }
    const tooDeep = expectError(
      await api.post('/prompts/partials', { slug: 'nest-32', string: '{{>nest-31}}' }),
      400,
      'invalid_prompt',
      'string',
    );
    expect(tooDeep.message).toContain('more than 32 deep');
    await createPrompt({ slug: 'deepest', template_type: 'completion', string: '{{>nest-31}}' });
    const rendered = await api.post('/prompts/deepest/render', { variables: {} });
    expect(rendered.body.body.prompt).toBe('core');
  });
});

describe('the request', () => {
  beforeAll(async () => {
    await createPrompt({
      slug: 'params',
      string: chatTemplate('Be brief.', '{{q}}'),
      parameters: { model: 'gpt-4o-mini', temperature: 0.2, max_tokens: 50, stream: true },
    });
  });

  it('takes the version parameters, overridden by the body, and stream only from the body', async () => {
    const reply = await complete(gateway, 'params', { variables: { q: 'x' } });
    expect(reply.status, reply.text).toBe(200);
    expect(lastBody(fake)).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2, max_tokens: 50 });
    expect(lastBody(fake).stream).toBeUndefined();
    await complete(gateway, 'params', { variables: { q: 'x' }, temperature: 1.5, model: 'gpt-4o', seed: 7 });
    expect(lastBody(fake)).toMatchObject({ model: 'gpt-4o', temperature: 1.5, max_tokens: 50, seed: 7 });
  });

  it('takes the limit from the body under either of its names', async () => {
    await complete(gateway, 'params', { variables: { q: 'x' }, max_completion_tokens: 20 });
    expect(lastBody(fake)).toMatchObject({ max_completion_tokens: 20 });
    expect(lastBody(fake).max_tokens).toBeUndefined();
    await createPrompt({
      slug: 'newer-limit',
      string: chatTemplate('Be brief.', '{{q}}'),
      parameters: { model: 'gpt-4o-mini', max_completion_tokens: 300 },
    });
    await complete(gateway, 'newer-limit', { variables: { q: 'x' }, max_tokens: 20 });
    expect(lastBody(fake)).toMatchObject({ max_tokens: 20 });
    expect(lastBody(fake).max_completion_tokens).toBeUndefined();
  });

  it('refuses a bad override naming it, and messages, which come from the template', async () => {
    expectError(
      await complete(gateway, 'params', { variables: { q: 'x' }, temperature: 9 }),
      400,
      'invalid_body',
      'temperature',
    );
    expectError(
      await complete(gateway, 'params', { variables: { q: 'x' }, messages: [] }),
      400,
      'invalid_body',
      'messages',
    );
    expectError(await complete(gateway, 'params', {}), 400, 'invalid_body', 'variables');
    const calls = fake.requests.length;
    expectError(
      await complete(gateway, 'params', { variables: { q: 'x' }, hyperparameters: { temperature: 1 } }),
      400,
      'invalid_body',
      'hyperparameters',
    );
    expect(fake.requests.length).toBe(calls);
  });

  it('/render returns the request without calling a model', async () => {
    const calls = fake.requests.length;
    const rendered = await api.post('/prompts/params/render', { variables: { q: 'a "b"' }, top_p: 0.5 });
    expect(rendered.status, rendered.text).toBe(200);
    expect(rendered.body).toMatchObject({
      object: 'prompt.render',
      slug: 'params',
      version: 1,
      endpoint: '/v1/chat/completions',
      body: {
        model: 'gpt-4o-mini',
        temperature: 0.2,
        top_p: 0.5,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'a "b"' },
        ],
      },
    });
    expect(fake.requests.length).toBe(calls);
  });

  it("/render answers as Portkey's SDKs read it too: success, and the request as data", async () => {
    const rendered = await api.post('/prompts/params/render', { variables: { q: 'x' }, model: 'gpt-4o' });
    expect(rendered.status, rendered.text).toBe(200);
    expect(rendered.body.success).toBe(true);
    expect(rendered.body.data).toEqual(rendered.body.body);
    expect(rendered.body.data).toMatchObject({
      model: 'gpt-4o',
      messages: [{ role: 'system' }, { role: 'user' }],
    });

    await createPrompt({ slug: 'text-render', template_type: 'completion', string: 'Say {{word}}' });
    const text = await api.post('/prompts/text-render/render', { variables: { word: 'hi' } });
    expect(text.status, text.text).toBe(200);
    expect(text.body).toMatchObject({
      success: true,
      endpoint: '/v1/completions',
      data: { model: 'gpt-4o-mini', prompt: 'Say hi' },
    });

    const document = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as {
      paths: Record<string, { post: { responses: Record<string, any> } }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON read
    };
    const answer = document.paths['/v1/prompts/{promptId}/render'].post.responses['200'];
    expect(answer.content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['object', 'body', 'success', 'data']),
    );
  });
});

describe('the answer', () => {
  let id: string;
  beforeAll(async () => {
    ({ id } = await createPrompt({ slug: 'answer', string: chatTemplate('Be brief.', 'Echo {{q}}') }));
  });

  it('is the envelope: status, headers, and a chat completion as the OpenAI document defines it', async () => {
    const { traceId, headers } = traceHeaders();
    const response = await fetch(`${gateway.url}/prompts/answer/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey, ...headers },
      body: JSON.stringify({ variables: { q: 'this' } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-prompt-id')).toBe(id);
    expect(response.headers.get('x-gateway-prompt-version')).toBe('1');
    const envelope = (await response.json()) as {
      status: string;
      headers: Record<string, string>;
      body: unknown;
    };
    expect(Object.keys(envelope)).toEqual(['status', 'headers', 'body']);
    expect(envelope.status).toBe('success');
    expect(envelope.headers).toMatchObject({
      'x-gateway-prompt-id': id,
      'x-gateway-prompt-version': '1',
      'x-gateway-provider': 'openai',
      'x-gateway-trace-id': traceId,
    });
    expectOpenAPIValid('CreateChatCompletionResponse', envelope.body);

    // The log record names the prompt and its version.
    const [record] = await logsOf(gateway, traceId, 1);
    const log = await api.get(`/logs/${record.id}`);
    expect(log.body).toMatchObject({ prompt_id: id, prompt_version: 1, endpoint: 'chat', status: 200 });
    expect(log.body.path).toBe('/v1/prompts/answer/completions');
  });

  it('streams data-only server-sent events ending with [DONE]', async () => {
    const response = await fetch(`${gateway.url}/prompts/answer@1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
      body: JSON.stringify({ variables: { q: 'streamed words' }, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('x-gateway-prompt-version')).toBe('1');
    const events = (await response.text()).split('\n\n').filter(Boolean);
    expect(events.every((event) => event.startsWith('data: '))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice(6)) as unknown);
    for (const chunk of chunks) expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
  });

  it("takes the version's stream_options when the call streams, and leaves them out when it does not", async () => {
    await createPrompt({
      slug: 'stream-usage',
      string: chatTemplate('Be brief.', 'Echo {{q}}'),
      parameters: { model: 'gpt-4o-mini', stream_options: { include_usage: true } },
    });
    const plain = await complete(gateway, 'stream-usage', { variables: { q: 'x' } });
    expect(plain.status, plain.text).toBe(200);
    expect(lastBody(fake).stream_options).toBeUndefined();
    const response = await fetch(`${gateway.url}/prompts/stream-usage/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
      body: JSON.stringify({ variables: { q: 'streamed words' }, stream: true }),
    });
    expect(response.status).toBe(200);
    const events = (await response.text()).split('\n\n').filter(Boolean);
    expect(lastBody(fake).stream_options).toEqual({ include_usage: true });
    const last = JSON.parse(events.at(-2)!.slice(6)) as { choices: unknown[]; usage: unknown };
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ total_tokens: expect.any(Number) });
  });

  it('reaches the openai SDK with its base URL at the prompt', async () => {
    const client = promptClient(gateway, 'answer');
    // completions.create posts to {baseURL}/completions: the envelope, as it came.
    const envelope = (await client.completions.create({
      variables: { q: 'sdk' },
    } as never)) as unknown as { status: string; body: unknown };
    expect(envelope.status).toBe('success');
    expectOpenAPIValid('CreateChatCompletionResponse', envelope.body);

    // chat.completions.create posts to {baseURL}/chat/completions: the plain chat completion.
    const completion = await client.chat.completions.create({
      variables: { q: 'plain' },
      temperature: 0.3,
    } as never);
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(lastBody(fake).temperature).toBe(0.3);

    const stream = await client.chat.completions.create({ variables: { q: 'a b c' }, stream: true } as never);
    let text = '';
    for await (const chunk of stream as unknown as AsyncIterable<{
      choices: Array<{ delta: { content?: string } }>;
    }>) {
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text.length).toBeGreaterThan(0);
  });
});

describe('a text completion prompt', () => {
  it('answers the envelope of a text completion, and is not a chat completion', async () => {
    await createPrompt({ slug: 'text', template_type: 'completion', string: 'Say {{word}}' });
    const reply = await complete(gateway, 'text', { variables: { word: 'hi' } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.body.object).toBe('text_completion');
    expect(lastBody(fake).prompt).toBe('Say hi');
    const calls = fake.requests.length;
    const chat = promptClient(gateway, 'text').chat.completions.create({
      variables: { word: 'hi' },
    } as never);
    await expect(chat).rejects.toMatchObject({
      status: 400,
      error: { code: 'unsupported_endpoint', param: 'promptId' },
    });
    expect(fake.requests.length).toBe(calls);
  });

  it('sends the limit as max_tokens, the one name /v1/completions knows, under either name', async () => {
    await createPrompt({
      slug: 'text-limit',
      template_type: 'completion',
      string: 'Say {{word}}',
      parameters: { model: 'gpt-3.5-turbo-instruct', max_tokens: 300 },
    });
    const reply = await complete(gateway, 'text-limit', {
      variables: { word: 'hi' },
      max_completion_tokens: 5,
    });
    expect(reply.status, reply.text).toBe(200);
    expect(lastBody(fake)).toMatchObject({ max_tokens: 5 });
    expect(lastBody(fake).max_completion_tokens).toBeUndefined();

    await createPrompt({
      slug: 'text-newer-limit',
      template_type: 'completion',
      string: 'Say {{word}}',
      parameters: { model: 'gpt-3.5-turbo-instruct', max_completion_tokens: 40 },
    });
    await complete(gateway, 'text-newer-limit', { variables: { word: 'hi' } });
    expect(lastBody(fake)).toMatchObject({ max_tokens: 40 });
    expect(lastBody(fake).max_completion_tokens).toBeUndefined();
  });
});

describe('routing behind a prompt', () => {
  it("a version without a model takes each target's model from its config's override_params", async () => {
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [500] },
      targets: [
        fakeTarget(fake, { override_params: { model: 'fake-status-500' } }),
        fakeTarget(fake, { override_params: { model: 'gpt-4o-mini' } }),
      ],
    };
    const created = await api.post('/prompts', {
      slug: 'model-per-target',
      string: chatTemplate('S', '{{q}}'),
      parameters: { temperature: 0.1 },
      config,
    });
    expect(created.status, created.text).toBe(200);
    const reply = await complete(gateway, 'model-per-target', { variables: { q: 'x' } });
    expect(reply.status, reply.text).toBe(200);
    expect(lastBody(fake)).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.1 });
    // The call's model, when it sends one, is each target's unless the target overrides it.
    const own = await complete(
      gateway,
      'model-per-target',
      { variables: { q: 'x' }, model: 'gpt-4o' },
      { 'x-gateway-config': JSON.stringify(fakeTarget(fake)) },
    );
    expect(own.status, own.text).toBe(200);
    expect(lastBody(fake).model).toBe('gpt-4o');

    // A target that would be sent no model: refused before any is called, naming it.
    const calls = fake.requests.length;
    const partial = { ...config, targets: [config.targets[0], fakeTarget(fake)] };
    const refused = expectError(
      await complete(
        gateway,
        'model-per-target',
        { variables: { q: 'x' } },
        { 'x-gateway-config': JSON.stringify(partial) },
      ),
      400,
      'invalid_body',
      'model',
    );
    expect(refused.message).toContain('config.targets[1]');
    expectError(
      await complete(
        gateway,
        'model-per-target',
        { variables: { q: 'x' } },
        {
          'x-gateway-config': JSON.stringify(fakeTarget(fake)),
        },
      ),
      400,
      'invalid_body',
      'model',
    );
    expect(fake.requests.length).toBe(calls);
  });

  it('a stored fallback config behind a prompt falls back, and the log has the version', async () => {
    const config = await api.post('/configs', {
      slug: 'prompt-fallback',
      config: {
        strategy: { mode: 'fallback', on_status_codes: [503] },
        targets: [fakeTarget(fake, { override_params: { model: 'fake-status-503' } }), fakeTarget(fake)],
      },
    });
    expect(config.status, config.text).toBe(200);
    const { id } = await createPrompt({
      slug: 'fallback',
      string: chatTemplate('Be brief.', '{{q}}'),
      config: 'prompt-fallback',
    });
    const { traceId, headers } = traceHeaders();
    const reply = await complete(gateway, 'fallback', { variables: { q: 'x' } }, headers);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.headers['x-gateway-last-used-option-index']).toBe('targets[1]');
    const records = await logsOf(gateway, traceId, 3);
    expect(records.map((r) => [r.is_attempt, r.status, r.prompt_id, r.prompt_version])).toEqual(
      expect.arrayContaining([
        [false, 200, id, 1],
        [true, 503, id, 1],
        [true, 200, id, 1],
      ]),
    );
  });

  it("a stored config the version names that is gone is named as the prompt's, not as a header", async () => {
    const stored = await api.post('/configs', { slug: 'gone-soon', config: fakeTarget(fake) });
    expect(stored.status, stored.text).toBe(200);
    await createPrompt({ slug: 'to-gone', string: chatTemplate('x', '{{q}}'), config: 'gone-soon' });
    await createPrompt({ slug: 'targets-gone', string: chatTemplate('y', '{{q}}') });
    expect((await api.delete('/configs/gone-soon?force=true')).status).toBe(200);

    const direct = expectError(
      await complete(gateway, 'to-gone', { variables: { q: 'x' } }),
      404,
      'config_not_found',
      'promptId',
    );
    expect(direct.message).toContain('"to-gone" (version 1)');
    expect(direct.message).toContain('"gone-soon"');
    const target = expectError(
      await complete(
        gateway,
        'targets-gone',
        { variables: { q: 'x' } },
        {
          'x-gateway-config': JSON.stringify({
            strategy: { mode: 'fallback' },
            targets: [{ prompt_id: 'to-gone' }],
          }),
        },
      ),
      404,
      'config_not_found',
      'config.targets[0].prompt_id',
    );
    expect(target.message).toContain('"gone-soon"');
  });

  it("the request's own config wins over the version's", async () => {
    await createPrompt({ slug: 'overridden', string: chatTemplate('x', '{{q}}'), config: fakeTarget(fake) });
    const reply = await complete(
      gateway,
      'overridden',
      { variables: { q: 'x' } },
      {
        'x-gateway-config': JSON.stringify(
          fakeTarget(fake, { override_params: { model: 'fake-status-429' } }),
        ),
      },
    );
    expect(reply.status).toBe(429);
  });

  it('prompt_id targets: a fallback across prompts, each rendered from its own template', async () => {
    const forA = await createPrompt({
      slug: 'for-a',
      string: chatTemplate('A', '{{goal}}'),
      parameters: { model: 'fake-status-500' },
    });
    const forB = await createPrompt({
      slug: 'for-b',
      string: chatTemplate('B', 'Goal: {{goal}}'),
      parameters: { model: 'gpt-4o-mini' },
    });
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [500] },
      targets: [{ prompt_id: 'for-a' }, { prompt_id: 'for-b@1' }],
    };
    const { traceId, headers } = traceHeaders();
    const reply = await complete(
      gateway,
      'for-a',
      { variables: { goal: 'fit "soon"' } },
      { ...headers, 'x-gateway-config': JSON.stringify(config) },
    );
    expect(reply.status, reply.text).toBe(200);
    expect(lastBody(fake)).toMatchObject({ model: 'gpt-4o-mini' });
    expect(lastUserContent(fake)).toBe('Goal: fit "soon"');
    expect((lastBody(fake).messages as Array<{ content: string }>)[0].content).toBe('B');
    // Each attempt's record names the prompt its target sent; the call's, the prompt called.
    const records = await logsOf(gateway, traceId, 3);
    expect(records.map((r) => [r.is_attempt, r.target, r.status, r.prompt_id, r.prompt_version])).toEqual(
      expect.arrayContaining([
        [false, 'targets[1]', 200, forA.id, 1],
        [true, 'targets[0]', 500, forA.id, 1],
        [true, 'targets[1]', 200, forB.id, 1],
      ]),
    );
  });

  it('prompt_id target answering alone: the attempt sent another prompt, so it has its own record', async () => {
    const caller = await createPrompt({ slug: 'caller-alone', string: chatTemplate('C', '{{q}}') });
    const sent = await createPrompt({
      slug: 'sent-alone',
      string: chatTemplate('S', 'Sent: {{q}}'),
      parameters: { model: 'gpt-4o-mini' },
    });
    const { traceId, headers } = traceHeaders();
    const reply = await complete(
      gateway,
      'caller-alone',
      { variables: { q: 'x' } },
      {
        ...headers,
        'x-gateway-config': JSON.stringify({
          strategy: { mode: 'fallback' },
          targets: [{ prompt_id: 'sent-alone' }],
        }),
      },
    );
    expect(reply.status, reply.text).toBe(200);
    expect(lastUserContent(fake)).toBe('Sent: x');
    const records = await logsOf(gateway, traceId, 2);
    expect(records.map((r) => [r.is_attempt, r.target, r.status, r.prompt_id, r.prompt_version])).toEqual(
      expect.arrayContaining([
        [false, 'targets[0]', 200, caller.id, 1],
        [true, 'targets[0]', 200, sent.id, 1],
      ]),
    );
  });

  it('prompt_id targets: a variable any of the prompts reads is taken, one none reads is refused', async () => {
    await createPrompt({
      slug: 'reads-q',
      string: chatTemplate('A', '{{q}}'),
      parameters: { model: 'fake-status-500' },
    });
    await createPrompt({
      slug: 'reads-q-and-context',
      string: chatTemplate('B {{context}}', '{{q}}'),
      parameters: { model: 'gpt-4o-mini' },
    });
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [500] },
      targets: [{ prompt_id: 'reads-q' }, { prompt_id: 'reads-q-and-context' }],
    };
    const headers = { 'x-gateway-config': JSON.stringify(config) };
    const reply = await complete(gateway, 'reads-q', { variables: { q: 'x', context: 'c' } }, headers);
    expect(reply.status, reply.text).toBe(200);
    expect((lastBody(fake).messages as Array<{ content: string }>)[0].content).toBe('B c');
    const calls = fake.requests.length;
    expectError(
      await complete(gateway, 'reads-q', { variables: { q: 'x', context: 'c', typo: 1 } }, headers),
      400,
      'invalid_variables',
      'variables.typo',
    );
    expect(fake.requests.length).toBe(calls);
    // Without prompt_id targets, the called prompt's own variables only.
    expectError(
      await complete(gateway, 'reads-q', { variables: { q: 'x', context: 'c' } }),
      400,
      'invalid_variables',
      'variables.context',
    );
  });

  it("prompt_id target: sent its own version's parameters, none of the called prompt's", async () => {
    const tool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } };
    await createPrompt({
      slug: 'called-params',
      string: chatTemplate('C', '{{q}}'),
      parameters: {
        model: 'gpt-4o-mini',
        temperature: 0.2,
        max_completion_tokens: 300,
        tools: [tool],
        tool_choice: 'required',
      },
    });
    await createPrompt({
      slug: 'target-params',
      string: chatTemplate('T', 'Sent: {{q}}'),
      parameters: { model: 'gpt-4o', max_tokens: 50 },
    });
    const config = { strategy: { mode: 'fallback' }, targets: [{ prompt_id: 'target-params' }] };
    const headers = { 'x-gateway-config': JSON.stringify(config) };
    const reply = await complete(gateway, 'called-params', { variables: { q: 'x' } }, headers);
    expect(reply.status, reply.text).toBe(200);
    const sent = lastBody(fake);
    expect(sent).toMatchObject({ model: 'gpt-4o', max_tokens: 50 });
    for (const key of ['temperature', 'max_completion_tokens', 'tools', 'tool_choice']) {
      expect(sent[key], key).toBeUndefined();
    }
    // The caller's own overrides go to every target, and so do the config's above it.
    await complete(gateway, 'called-params', { variables: { q: 'x' }, temperature: 0.7 }, headers);
    expect(lastBody(fake)).toMatchObject({ model: 'gpt-4o', max_tokens: 50, temperature: 0.7 });
    const above = { ...config, override_params: { tool_choice: 'none', top_p: 0.5 } };
    await complete(
      gateway,
      'called-params',
      { variables: { q: 'x' } },
      { 'x-gateway-config': JSON.stringify(above) },
    );
    expect(lastBody(fake)).toMatchObject({ model: 'gpt-4o', tool_choice: 'none', top_p: 0.5 });
    expect(lastBody(fake).tools).toBeUndefined();
  });
});

describe('a config across prompts stored as their destination', () => {
  it('needs the provider on each target, and says so when a target has none', async () => {
    const targets = [{ prompt_id: 'across-first' }, { prompt_id: 'across-second' }];
    // The config names the prompts and the first prompt names the config: it names them once they exist.
    const stored = await api.post('/configs', { slug: 'across-prompts', config: fakeTarget(fake) });
    expect(stored.status, stored.text).toBe(200);
    await createPrompt({
      slug: 'across-first',
      string: chatTemplate('First', '{{q}}'),
      parameters: { model: 'fake-status-500' },
      config: 'across-prompts',
    });
    await createPrompt({ slug: 'across-second', string: chatTemplate('Second', '{{q}}') });
    const across = await call(gateway.url, gateway.adminKey, 'PATCH', '/configs/across-prompts', {
      config: { strategy: { mode: 'fallback', on_status_codes: [500] }, targets },
    });
    expect(across.status, across.text).toBe(200);
    const calls = fake.requests.length;
    const error = expectError(
      await complete(gateway, 'across-first', { variables: { q: 'x' } }),
      400,
      'invalid_config',
      'config.targets[0].prompt_id',
    );
    expect(error.message).toContain('name the provider or virtual_key on this target');
    expect(fake.requests.length).toBe(calls);

    const updated = await call(gateway.url, gateway.adminKey, 'PATCH', '/configs/across-prompts', {
      config: {
        strategy: { mode: 'fallback', on_status_codes: [500] },
        targets: targets.map((target) => fakeTarget(fake, target)),
      },
    });
    expect(updated.status, updated.text).toBe(200);
    const reply = await complete(gateway, 'across-first', { variables: { q: 'x' } });
    expect(reply.status, reply.text).toBe(200);
    expect((lastBody(fake).messages as Array<{ content: string }>)[0].content).toBe('Second');
  });
});

describe('templates refused when stored, storing nothing', () => {
  const cases: Array<[string, string, string, string?]> = [
    ['invalid Mustache', chatTemplate('{{#open}}', 'x'), 'Mustache'],
    ['a variable outside a string', '[{"role":"user","content":"x","name":{{who}}}]', 'inside a JSON string'],
    ['an unescaped variable', chatTemplate('{{{raw}}}', 'x'), 'unescaped'],
    ['JSON that is not messages', '{"role":"user"}', 'array of messages'],
    ['invalid JSON', '[{"role":"user","content":"x"]', 'JSON messages'],
    ['a message without a role', '[{"content":"{{q}}"}]', 'invalid messages', 'messages[0]'],
    ...[17, 2000].map((depth): [string, string, string] => [
      `${depth} nested sections`,
      chatTemplate(`${'{{#a}}'.repeat(depth)}x${'{{/a}}'.repeat(depth)}`, 'y'),
      'more than 16 deep',
    ]),
  ];

  it.each(cases)('%s', async (_name, string, message, param) => {
    const reply = await api.post('/prompts', { slug: 'refused', string, parameters: { model: 'm' } });
    const error = expectError(reply, 400, 'invalid_prompt');
    expect(error.message).toContain(message);
    if (param) expect(error.param).toContain(param);
    expectError(await api.get('/prompts/refused'), 404, 'prompt_not_found');
  });

  it('bad parameters are named, and an update keeps the stored version', async () => {
    expectError(
      await api.post('/prompts', {
        slug: 'refused',
        string: chatTemplate('x', 'y'),
        parameters: { temperature: 7 },
      }),
      400,
      'invalid_body',
      'parameters.temperature',
    );
    for (const name of ['messages', 'variables', 'allow_unknown_variables']) {
      expectError(
        await api.post('/prompts', {
          slug: 'refused',
          string: chatTemplate('x', 'y'),
          parameters: { model: 'm', [name]: name === 'messages' ? [] : {} },
        }),
        400,
        'invalid_body',
        `parameters.${name}`,
      );
    }
    expectError(
      await api.post('/prompts', {
        slug: 'refused',
        template_type: 'completion',
        string: 'x',
        parameters: { model: 'm', prompt: 'y' },
      }),
      400,
      'invalid_body',
      'parameters.prompt',
    );
    expectError(await api.get('/prompts/refused'), 404, 'prompt_not_found');
    await createPrompt({ slug: 'kept', string: chatTemplate('x', '{{y}}') });
    expectError(await api.put('/prompts/kept', { string: '[{{x}}]' }), 400, 'invalid_prompt');
    expect((await api.get('/prompts/kept')).body.version).toBe(1);
  });
});

describe('a model written @provider_slug/model', () => {
  let catalog: FakeUpstream;
  beforeAll(async () => {
    catalog = await startFakeOpenAI({ name: 'prompts-catalog' });
    await addCatalogProvider(
      client(gateway.url, gateway.adminKey),
      'prompt-cat',
      'sk-prompt-cat',
      catalog.url,
    );
    const created = await api.post('/prompts', {
      slug: 'catalog-model',
      string: JSON.stringify([{ role: 'user', content: 'Yo {{name}}' }]),
      parameters: { model: '@prompt-cat/gpt-4o-mini' },
    });
    expect(created.status, created.text).toBe(200);
    await createPrompt({ slug: 'plain-model', string: chatTemplate('S', '{{q}}'), config: undefined });
  });
  afterAll(async () => {
    await catalog?.close();
  });

  const sent = () => {
    const request = catalog.requests.at(-1)!;
    return {
      model: (request.body as { model?: unknown }).model,
      authorization: request.headers.authorization,
    };
  };

  it("sends a version's catalog model to that provider, with only the gateway key, as chat completions do", async () => {
    const reply = await complete(gateway, 'catalog-model', { variables: { name: 'a' } });
    expect(reply.status, reply.text).toBe(200);
    expect(sent()).toEqual({ model: 'gpt-4o-mini', authorization: 'Bearer sk-prompt-cat' });
    expect(lastUserContent(catalog)).toBe('Yo a');

    const answer = await promptClient(gateway, 'catalog-model').chat.completions.create({
      variables: { name: 'b' },
    } as never);
    expect(answer.model).toBe('gpt-4o-mini');
    expect(lastUserContent(catalog)).toBe('Yo b');
  });

  it("takes the request's model over the version's: the rendered body's model decides", async () => {
    const reply = await complete(gateway, 'catalog-model', {
      variables: { name: 'a' },
      model: '@prompt-cat/gpt-4o',
    });
    expect(reply.status, reply.text).toBe(200);
    expect(sent()).toEqual({ model: 'gpt-4o', authorization: 'Bearer sk-prompt-cat' });

    const calls = catalog.requests.length;
    const plain = await complete(
      gateway,
      'plain-model',
      { variables: { q: 'x' }, model: '@prompt-cat/gpt-4o' },
      {},
    );
    expect(plain.status, plain.text).toBe(200);
    expect(catalog.requests.length).toBe(calls + 1);
    expect(sent()).toEqual({ model: 'gpt-4o', authorization: 'Bearer sk-prompt-cat' });
  });

  it('sends a prompt_id target whose version names a catalog model to that provider', async () => {
    const config = { strategy: { mode: 'fallback' }, targets: [{ prompt_id: 'catalog-model' }] };
    const reply = await complete(
      gateway,
      'plain-model',
      { variables: { q: 'x', name: 'c' } },
      { 'x-gateway-config': JSON.stringify(config) },
    );
    expect(reply.status, reply.text).toBe(200);
    expect(sent()).toEqual({ model: 'gpt-4o-mini', authorization: 'Bearer sk-prompt-cat' });
    expect(lastUserContent(catalog)).toBe('Yo c');
  });

  it('streams from the catalog provider', async () => {
    const reply = await call(gateway.url, gateway.adminKey, 'POST', '/prompts/catalog-model/completions', {
      variables: { name: 'a' },
      stream: true,
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.text).toContain('data: [DONE]');
    expect(sent().model).toBe('gpt-4o-mini');
  });

  it('names the model as a way to say where to go when nothing says so', async () => {
    const refused = expectError(
      await complete(gateway, 'plain-model', { variables: { q: 'x' } }),
      400,
      'missing_provider',
    );
    expect(refused.message).toContain('@<provider_slug>/<model>');
    const calls = catalog.requests.length;
    expectError(
      await complete(gateway, 'catalog-model', { variables: { name: 'a' }, model: '@no-such-cat/gpt-4o' }),
      404,
      'virtual_key_not_found',
      'model',
    );
    expect(catalog.requests.length).toBe(calls);
  });
});
