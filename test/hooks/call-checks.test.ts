/**
 * The checks that read the call rather than (only) its text: containsCode, modelWhitelist,
 * requiredMetadataKeys, allowedRequestTypes; and the refusal of a check on an event it does not support.
 */
import { describe, expect, it } from 'vitest';
import { checkParameterError } from '../../src/hooks/registry.js';
import { context, onAnswer, onRequest, runCheck } from './support.js';

describe('default.containsCode', () => {
  const answer = 'Try this:\n```py\nprint(1)\n```\nor\n```bash\nls\n```\nand\n```\nplain\n```';
  it('finds code blocks by their language tag, aliases included', async () => {
    const python = await runCheck('containsCode', onAnswer(answer), { format: 'Python' });
    expect(python).toMatchObject({ verdict: true, data: { format: 'Python', found: ['Python', 'Shell'] } });
    expect((await runCheck('containsCode', onAnswer(answer), { format: 'SQL' })).verdict).toBe(false);
    expect((await runCheck('containsCode', onAnswer('SELECT * FROM t'), { format: 'SQL' })).verdict).toBe(
      false,
    );
  });

  it('refuses an unknown format, naming the field', () => {
    expect(checkParameterError('containsCode', { format: 'Cobol' }, 'afterRequestHook')?.param).toBe(
      'parameters.format',
    );
  });
});

describe('default.modelWhitelist', () => {
  it("checks the target's model, else the request's", async () => {
    const models = ['gpt-4o-mini'];
    expect((await runCheck('modelWhitelist', onRequest('hi'), { models })).verdict).toBe(true);
    const overridden = onRequest('hi', { model: 'gpt-4o' });
    expect(await runCheck('modelWhitelist', overridden, { models })).toMatchObject({
      verdict: false,
      data: { model: 'gpt-4o' },
    });
    const none = context({ request: { messages: [] }, model: undefined });
    expect((await runCheck('modelWhitelist', none, { models })).verdict).toBe(false);
  });
});

describe('default.requiredMetadataKeys', () => {
  const metadataKeys = ['team', 'user'];
  it('all (default) / any / none over the metadata keys', async () => {
    const ctx = onRequest('x', { metadata: { team: 'a' } });
    expect(await runCheck('requiredMetadataKeys', ctx, { metadataKeys })).toMatchObject({
      verdict: false,
      data: { operator: 'all', found: ['team'], missing: ['user'] },
    });
    expect((await runCheck('requiredMetadataKeys', ctx, { metadataKeys, operator: 'any' })).verdict).toBe(
      true,
    );
    expect((await runCheck('requiredMetadataKeys', ctx, { metadataKeys, operator: 'none' })).verdict).toBe(
      false,
    );
    const full = onRequest('x', { metadata: { team: 'a', user: 'b' } });
    expect((await runCheck('requiredMetadataKeys', full, { metadataKeys })).verdict).toBe(true);
  });

  it('is refused after the request, naming the check', () => {
    expect(checkParameterError('default.requiredMetadataKeys', { metadataKeys }, 'afterRequestHook')).toEqual(
      {
        message:
          'default.requiredMetadataKeys: cannot be used on the answer (after_request_hooks, output_guardrails); it runs only before the request (before_request_hooks, input_guardrails)',
        param: 'id',
      },
    );
    expect(
      checkParameterError('default.requiredMetadataKeys', { metadataKeys }, 'beforeRequestHook'),
    ).toBeNull();
  });
});

describe('default.allowedRequestTypes', () => {
  it('passes listed types, fails others and blocked ones', async () => {
    const embed = context({ requestType: 'embed', request: { model: 'e', input: 'x' } });
    expect((await runCheck('allowedRequestTypes', embed, { allowed: ['embed'] })).verdict).toBe(true);
    expect((await runCheck('allowedRequestTypes', embed, { allowed: ['chatComplete'] })).verdict).toBe(false);
    expect((await runCheck('allowedRequestTypes', embed, { allowedTypes: ['embed'] })).verdict).toBe(true);
    expect((await runCheck('allowedRequestTypes', embed, { blockedTypes: ['embed'] })).verdict).toBe(false);
    expect((await runCheck('allowedRequestTypes', embed, { blockedTypes: ['complete'] })).verdict).toBe(true);
  });

  it("tells Messages and Responses calls from chat calls, by the reference gateway's names", async () => {
    for (const callType of ['messages', 'messagesCountTokens', 'createModelResponse'] as const) {
      const call = context({ callType });
      expect((await runCheck('allowedRequestTypes', call, { allowed: ['chatComplete'] })).verdict).toBe(
        false,
      );
      expect(await runCheck('allowedRequestTypes', call, { allowed: [callType] })).toMatchObject({
        verdict: true,
        data: { requestType: callType },
      });
    }
  });

  it('refuses unknown types, no list, two names for one list and a type both allowed and blocked', () => {
    const problem = (p: unknown) => checkParameterError('allowedRequestTypes', p, 'beforeRequestHook');
    expect(problem({ allowed: ['chat'] })?.param).toBe('parameters.allowed[0]');
    expect(problem({})).toEqual({
      message: 'default.allowedRequestTypes: parameters.allowed is required (or blockedTypes)',
      param: 'parameters.allowed',
    });
    expect(problem({ allowed: ['embed'], allowedTypes: ['embed'] })?.param).toBe('parameters.allowedTypes');
    expect(problem({ allowed: ['embed'], blockedTypes: ['embed'] })?.message).toBe(
      "default.allowedRequestTypes: parameters.blockedTypes names 'embed', which allowed also names",
    );
    expect(
      checkParameterError('allowedRequestTypes', { allowed: ['embed'] }, 'afterRequestHook')?.param,
    ).toBe('id');
  });
});
