/**
 * A render is bounded by the work it does, not only by what it writes: sections over lists and partials
 * that include partials repeat at each level even when they write nothing, so each list of tokens rendered
 * (a section's item, a partial's inclusion) and each token in it is a step, and a render past the steps
 * allowed is refused — at call time and when a prompt is stored.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import {
  compileTemplate,
  MAX_RENDER_STEPS,
  renderTemplate,
} from '../../src/gateway/prompts/prompt-template.js';
import { checkPromptDocument, renderPrompt } from '../../src/gateway/prompts/render-prompt.js';
import type { PromptDocument } from '../../src/store/types.js';

/** Far longer than a bounded render takes; these shapes ran for minutes before they were bounded. */
const SAFETY_NET_MS = 10_000;

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('the render was not refused');
}

async function asyncRefusal(run: () => Promise<unknown>): Promise<GatewayError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

const input = (variables: Record<string, unknown>) => ({
  variables,
  allowUnknownVariables: false,
  overrides: {},
  stream: undefined,
});

/** Partials each including the next twice, the last one empty: 2^depth inclusions writing nothing. */
function doublingPartials(depth: number): Map<string, string> {
  const partials = new Map([[`p${depth}`, '']]);
  for (let i = 0; i < depth; i++) partials.set(`p${i}`, `{{>p${i + 1}}}{{>p${i + 1}}}`);
  return partials;
}

const loaderOf = (partials: ReadonlyMap<string, string>) => async (name: string) => {
  const text = partials.get(name);
  return text === undefined ? undefined : { text, record: { name }, id: `ptl_${name}` };
};

describe('sections that write nothing', () => {
  it('nested over lists are refused once past the steps allowed', () => {
    const template = compileTemplate('completion', '{{#a}}{{#a}}{{#a}}{{/a}}{{/a}}{{/a}}');
    const a = Array.from({ length: 300 }, () => 1); // 27M iterations, no output
    const started = Date.now();
    const err = refusal(() => renderTemplate(template, { a }, new Map()));
    expect(Date.now() - started).toBeLessThan(SAFETY_NET_MS);
    expect(err.code).toBe('invalid_variables');
    expect(err.param).toBe('variables');
    expect(err.message).toContain(`more than ${MAX_RENDER_STEPS} steps`);
  });

  it('in a chat template called with two long lists: a 400 naming variables', async () => {
    const prompt = {
      template_type: 'chat',
      string: '[{"role":"user","content":"{{#items}}{{#tags}}{{tag}}{{/tags}}{{/items}}"}]',
      parameters: { model: 'gpt-4o-mini' },
    } as unknown as PromptDocument;
    const none = async () => undefined;
    await checkPromptDocument(prompt, none);
    const list = Array.from({ length: 8000 }, () => 0); // 64M iterations
    const started = Date.now();
    const err = await asyncRefusal(() => renderPrompt({ prompt }, input({ items: list, tags: list }), none));
    expect(Date.now() - started).toBeLessThan(SAFETY_NET_MS);
    expect(err.code).toBe('invalid_variables');
    expect(err.param).toBe('variables');
  });

  it('a render within the steps allowed is unchanged', async () => {
    const prompt = {
      template_type: 'completion',
      string: '{{#items}}{{#tags}}{{.}},{{/tags}}{{/items}}',
      parameters: { model: 'gpt-4o-mini' },
    } as unknown as PromptDocument;
    const list = Array.from({ length: 300 }, (_, i) => i);
    const { request } = await renderPrompt(
      { prompt },
      input({ items: list, tags: list }),
      async () => undefined,
    );
    const text = (request.body as { prompt: string }).prompt;
    expect(text).toHaveLength(300 * list.join(',').length + 300);
  });
});

describe('partials that include the next one twice, ending in an empty one', () => {
  it('are refused at call time', () => {
    const template = compileTemplate('completion', '{{>p0}}');
    const started = Date.now();
    const err = refusal(() => renderTemplate(template, {}, doublingPartials(30)));
    expect(Date.now() - started).toBeLessThan(SAFETY_NET_MS);
    expect(err.code).toBe('invalid_variables');
    expect(err.param).toBe('variables');
  });

  it('are refused when the prompt including them is stored', async () => {
    const prompt = {
      template_type: 'chat',
      string: '[{"role":"user","content":"{{>p0}}"}]',
      parameters: { model: 'gpt-4o-mini' },
    } as unknown as PromptDocument;
    const started = Date.now();
    const err = await asyncRefusal(() => checkPromptDocument(prompt, loaderOf(doublingPartials(30))));
    expect(Date.now() - started).toBeLessThan(SAFETY_NET_MS);
    expect(err.code).toBe('invalid_prompt');
    expect(err.param).toBe('string');
    expect(err.message).toContain(`more than ${MAX_RENDER_STEPS} steps`);
  });

  it('a few levels of them still render', async () => {
    const prompt = {
      template_type: 'completion',
      string: '{{>p0}}x',
      parameters: { model: 'gpt-4o-mini' },
    } as unknown as PromptDocument;
    await checkPromptDocument(prompt, loaderOf(doublingPartials(10)));
  });
});

describe('a partial included many times', () => {
  it('takes its line’s indentation in a text template at each inclusion, and none in a chat template', () => {
    const partials = new Map([['rules', 'one\ntwo\n']]);
    const text = compileTemplate('completion', 'Rules:\n  {{>rules}}\n    {{>rules}}\nEnd');
    expect(renderTemplate(text, {}, partials)).toBe('Rules:\n  one\n  two\n    one\n    two\nEnd');
    const chat = compileTemplate('chat', '[{"role":"user","content":"{{#a}}\n  {{>rules}}\n{{/a}}"}]');
    expect(renderTemplate(chat, { a: [1, 2] }, partials)).toBe(
      '[{"role":"user","content":"\none\ntwo\n\none\ntwo\n"}]',
    );
  });
});
