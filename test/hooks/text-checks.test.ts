/**
 * The checks that read text and nothing else: contains, wordCount, sentenceCount, characterCount,
 * alluppercase, alllowercase, endsWith. Each reads the request's text before the call and the answer's after.
 */
import { describe, expect, it } from 'vitest';
import { context, chatRequest, chatAnswer, onAnswer, onRequest, runCheck } from './support.js';

describe('default.contains', () => {
  const words = ['alpha', 'beta'];
  it('any / all / none over the words, case-sensitive, with what was found in data', async () => {
    const text = 'the alpha team';
    expect((await runCheck('default.contains', onRequest(text), { words })).verdict).toBe(true);
    expect((await runCheck('default.contains', onRequest(text), { words, operator: 'all' })).verdict).toBe(
      false,
    );
    expect((await runCheck('default.contains', onRequest(text), { words, operator: 'none' })).verdict).toBe(
      false,
    );
    expect(
      (await runCheck('default.contains', onRequest('ALPHA'), { words, operator: 'none' })).verdict,
    ).toBe(true);
    const both = await runCheck('default.contains', onRequest('alpha beta'), { words, operator: 'all' });
    expect(both.verdict).toBe(true);
    expect(both.data).toEqual({ operator: 'all', found: ['alpha', 'beta'], missing: [] });
  });

  it('reads the answer after the call, not the request', async () => {
    const ctx = context({ request: chatRequest('alpha'), response: chatAnswer('nothing here') });
    expect((await runCheck('default.contains', ctx, { words: ['alpha'] })).verdict).toBe(false);
  });
});

describe('default.wordCount', () => {
  it('counts words, not punctuation, within the range', async () => {
    const ctx = onRequest('  one two — three!  ');
    const result = await runCheck('wordCount', ctx, { minWords: 3, maxWords: 3 });
    expect(result.verdict).toBe(true);
    expect(result.data).toEqual({ wordCount: 3, minWords: 3, maxWords: 3 });
    expect((await runCheck('wordCount', ctx, { maxWords: 2 })).verdict).toBe(false);
    expect((await runCheck('wordCount', ctx, { minWords: 4 })).explanation).toBe(
      'The text has 3 words, below the minimum of 4.',
    );
  });

  it('reads white space as zero words, and gives no verdict on an empty text (its on_error decides)', async () => {
    expect((await runCheck('wordCount', onRequest(' \n'), { minWords: 1 })).verdict).toBe(false);
    expect((await runCheck('wordCount', onRequest(' \n'), { maxWords: 0 })).verdict).toBe(true);
    await expect(runCheck('wordCount', onRequest(''), { minWords: 1 })).rejects.toThrow(
      'the request has no text to check',
    );
    await expect(runCheck('wordCount', onAnswer(''), { maxWords: 0 })).rejects.toThrow(
      'the answer has no text to check',
    );
  });
});

describe('default.sentenceCount', () => {
  it('counts sentences by segmentation: an unterminated sentence counts, an ellipsis or a decimal point ends none', async () => {
    const count = async (text: string) =>
      ((await runCheck('sentenceCount', onAnswer(text), {})).data as { sentenceCount: number }).sentenceCount;
    expect(await count('Hello')).toBe(1);
    expect(await count('Wait... what?! Yes.')).toBe(2);
    expect(await count('Wait. What?! Yes.')).toBe(3);
    expect(await count('It costs 3.50 dollars. Fine')).toBe(2);
    expect(await count(' ')).toBe(0);
    expect((await runCheck('sentenceCount', onAnswer('One. Two. Three.'), { maxSentences: 2 })).verdict).toBe(
      false,
    );
    expect(
      (await runCheck('sentenceCount', onAnswer('One. Two.'), { minSentences: 2, maxSentences: 2 })).verdict,
    ).toBe(true);
  });
});

describe('default.characterCount', () => {
  it('counts code points, so an emoji is one character', async () => {
    const result = await runCheck('characterCount', onRequest('ab😀'), {
      minCharacters: 3,
      maxCharacters: 3,
    });
    expect(result.verdict).toBe(true);
    expect((result.data as { characterCount: number }).characterCount).toBe(3);
    expect((await runCheck('characterCount', onRequest('abcd'), { maxCharacters: 3 })).verdict).toBe(false);
  });
});

describe('default.alluppercase and default.alllowercase', () => {
  it('pass on text with no letter of the other case', async () => {
    expect((await runCheck('alluppercase', onAnswer('HELLO, WORLD 42!'))).verdict).toBe(true);
    expect((await runCheck('alluppercase', onAnswer('HELLO, World'))).verdict).toBe(false);
    expect((await runCheck('alllowercase', onAnswer('héllo wörld'))).verdict).toBe(true);
    expect((await runCheck('alllowercase', onAnswer('Hello'))).verdict).toBe(false);
    expect((await runCheck('alluppercase', onAnswer('123'))).verdict).toBe(true);
  });
});

describe('default.endsWith', () => {
  it('ignores trailing white space and accepts the suffix with a full stop', async () => {
    expect((await runCheck('endsWith', onAnswer('Thanks, Regards\n'), { suffix: 'Regards' })).verdict).toBe(
      true,
    );
    expect((await runCheck('endsWith', onAnswer('Thanks, Regards.'), { suffix: 'Regards' })).verdict).toBe(
      true,
    );
    expect((await runCheck('endsWith', onAnswer('Regards, Thanks'), { suffix: 'Regards' })).verdict).toBe(
      false,
    );
  });
});
