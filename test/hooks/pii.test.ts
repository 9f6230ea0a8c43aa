/**
 * default.pii: what each category recognises and what it leaves alone (Luhn, mod-97 and SSN ranges
 * decide), `data` counting without values, redaction rewriting every message and every choice with
 * consistent placeholders, and detection in time bounded by the text's size on 100 KB adversarial input.
 */
import { describe, expect, it } from 'vitest';
import { cardNumberValid, ibanValid, luhnValid, ssnValid } from '../../src/hooks/checks/pii/checksums.js';
import { PII_CATEGORIES, detectPii, type PiiCategory } from '../../src/hooks/checks/pii/detectors.js';
import { checkParameterError } from '../../src/hooks/registry.js';
import { chatAnswer, context, onAnswer, onRequest, runCheck } from './support.js';

const ALL = new Set<PiiCategory>(PII_CATEGORIES);

/** What the detectors find in `text`: [category, value] pairs. */
function found(text: string, categories: ReadonlySet<PiiCategory> = ALL): Array<[PiiCategory, string]> {
  return detectPii(text, categories).map((span) => [span.category, text.slice(span.start, span.end)]);
}

describe('validity rules', () => {
  it('Luhn and card prefixes', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(cardNumberValid('378282246310005')).toBe(true);
    expect(cardNumberValid('5500000000000004')).toBe(true);
    expect(cardNumberValid('0000000000000000')).toBe(false); // Luhn-valid, no network's prefix
    expect(cardNumberValid('411111111111')).toBe(false); // too short
  });

  it('IBAN mod-97', () => {
    expect(ibanValid('DE89370400440532013000')).toBe(true);
    expect(ibanValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanValid('GB82WEST12345698765433')).toBe(false);
    expect(ibanValid('DE8937040044')).toBe(false);
  });

  it('SSN ranges never issued', () => {
    expect(ssnValid('123', '45', '6789')).toBe(true);
    for (const [a, g, s] of [
      ['000', '12', '3456'],
      ['666', '12', '3456'],
      ['900', '12', '3456'],
      ['999', '12', '3456'],
      ['123', '00', '4567'],
      ['123', '45', '0000'],
      ['078', '05', '1120'],
    ] as const) {
      expect(ssnValid(a, g, s)).toBe(false);
    }
  });
});

describe('detectPii', () => {
  it('emails', () => {
    expect(found('mail john.doe+x@mail.example.com today')).toEqual([
      ['email', 'john.doe+x@mail.example.com'],
    ]);
    expect(found('a@b, user@localhost, @handle')).toEqual([]);
  });

  it('phone numbers: international, North American and UK national forms; not bare digit runs', () => {
    expect(found('call +44 20 7946 0958 now')).toEqual([['phone', '+44 20 7946 0958']]);
    expect(found('call +1 (415) 555-0132.')).toEqual([['phone', '+1 (415) 555-0132']]);
    expect(found('(415) 555-0132 or 415-555-0132 or 415.555.0132')).toEqual([
      ['phone', '(415) 555-0132'],
      ['phone', '415-555-0132'],
      ['phone', '415.555.0132'],
    ]);
    expect(found('office 020 7946 0958, mobile 07700 900123')).toEqual([
      ['phone', '020 7946 0958'],
      ['phone', '07700 900123'],
    ]);
    expect(found('order 4155550132, build 2024-01-15, +12, 3.14159, 1-800')).toEqual([]);
  });

  it('payment cards only with a valid Luhn digit', () => {
    expect(found('card 4111 1111 1111 1111 ok')).toEqual([['credit_card', '4111 1111 1111 1111']]);
    expect(found('card 5500-0000-0000-0004')).toEqual([['credit_card', '5500-0000-0000-0004']]);
    expect(found('amex 378282246310005')).toEqual([['credit_card', '378282246310005']]);
    expect(found('card 4111 1111 1111 1112')).toEqual([]);
  });

  it('national ids: US SSNs outside the never-issued ranges, UK NINOs with allocated prefixes', () => {
    expect(found('ssn 123-45-6789')).toEqual([['national_id', '123-45-6789']]);
    expect(found('ssn 000-12-3456, 666-12-3456, 912-34-5678, 123-00-4567, 078-05-1120')).toEqual([]);
    expect(found('NI AB 12 34 56 C and AB123456C')).toEqual([
      ['national_id', 'AB 12 34 56 C'],
      ['national_id', 'AB123456C'],
    ]);
    expect(found('NI QQ123456C GB123456A')).toEqual([]);
  });

  it('IBANs, grouped or not, only mod-97 valid', () => {
    expect(found('pay DE89 3704 0044 0532 0130 00 AND more')).toEqual([
      ['iban', 'DE89 3704 0044 0532 0130 00'],
    ]);
    expect(found('pay GB82WEST12345698765432.')).toEqual([['iban', 'GB82WEST12345698765432']]);
    expect(found('pay GB82WEST12345698765433')).toEqual([]);
  });

  it('IP addresses, not versions or C++ scopes or times', () => {
    expect(found('from 192.168.1.10 and 2001:db8::8a2e:370:7334 and fe80::1')).toEqual([
      ['ip_address', '192.168.1.10'],
      ['ip_address', '2001:db8::8a2e:370:7334'],
      ['ip_address', 'fe80::1'],
    ]);
    expect(found('v1.2.3.4, 1.2.3.4.5, 256.1.1.1, std::vector, at 12:30:45')).toEqual([]);
  });

  it('only the categories asked for', () => {
    const text = 'a@b.io 192.168.0.1';
    expect(found(text, new Set<PiiCategory>(['ip_address']))).toEqual([['ip_address', '192.168.0.1']]);
  });
});

describe('default.pii', () => {
  const request = {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'Contact ann@example.com for help.' },
      {
        role: 'user',
        content: [{ type: 'text', text: 'I am ann@example.com, call me on +44 20 7946 0958' }],
      },
      { role: 'assistant', content: 'Noted.' },
      { role: 'user', content: 'Also bob@example.org.' },
    ],
  };

  it('fails when PII is found anywhere in the request, counting without values', async () => {
    const result = await runCheck('default.pii', context({ request }), {});
    expect(result.verdict).toBe(false);
    expect(result.data).toEqual({ found: { email: 3, phone: 1 } });
    expect(result.transformed).toBeUndefined();
    const shown = JSON.stringify(result);
    for (const value of ['ann@example.com', 'bob@example.org', '7946']) expect(shown).not.toContain(value);
  });

  it('passes text without PII, and only looks for the categories asked for', async () => {
    expect((await runCheck('pii', onRequest('nothing personal here'), {})).verdict).toBe(true);
    expect((await runCheck('pii', context({ request }), { categories: ['credit_card'] })).verdict).toBe(true);
  });

  it('redacts every message with consistent placeholders, and passes', async () => {
    const copy = structuredClone(request);
    const result = await runCheck('pii', context({ request }), { redact: true });
    expect(result.verdict).toBe(true);
    expect(result.data).toEqual({ found: { email: 3, phone: 1 }, redacted: true });
    expect(result.transformed).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Contact [EMAIL_1] for help.' },
        { role: 'user', content: [{ type: 'text', text: 'I am [EMAIL_1], call me on [PHONE_1]' }] },
        { role: 'assistant', content: 'Noted.' },
        { role: 'user', content: 'Also [EMAIL_2].' },
      ],
    });
    expect(request).toEqual(copy);
  });

  it('redacts every choice of an answer after the call', async () => {
    const response = chatAnswer('Card 4111 1111 1111 1111.', 'SSN 123-45-6789, IP 10.0.0.1');
    const result = await runCheck('pii', context({ response }), { redact: true });
    const choices = (result.transformed as { choices: Array<{ message: { content: string } }> }).choices;
    expect(choices.map((choice) => choice.message.content)).toEqual([
      'Card [CREDIT_CARD_1].',
      'SSN [NATIONAL_ID_1], IP [IP_ADDRESS_1]',
    ]);
    expect((await runCheck('pii', onAnswer('Card 4111 1111 1111 1111.'), {})).verdict).toBe(false);
  });

  it('refuses unknown categories and an empty list, naming the field', () => {
    expect(checkParameterError('default.pii', { categories: ['ssn'] }, 'beforeRequestHook')?.param).toBe(
      'parameters.categories[0]',
    );
    expect(checkParameterError('default.pii', { categories: [] }, 'beforeRequestHook')?.param).toBe(
      'parameters.categories',
    );
    expect(checkParameterError('default.pii', { redact: 'yes' }, 'beforeRequestHook')?.param).toBe(
      'parameters.redact',
    );
  });

  // Each shape is built to make a backtracking pattern retry from every position (a long run that nearly
  // matches). On the linear-time engine each finishes far inside the timeout; a quadratic detector would
  // need tens of seconds at this size. No clock is read.
  it('runs on 100 KB of adversarial input for every category', { timeout: 20_000 }, async () => {
    const size = 100_000;
    const shapes = [
      'a'.repeat(size),
      '1'.repeat(size),
      '1 '.repeat(size / 2),
      '1-'.repeat(size / 2),
      'a@'.repeat(size / 2),
      'a.'.repeat(size / 2),
      '1.'.repeat(size / 2),
      'a:'.repeat(size / 2),
      '1:'.repeat(size / 2),
      '+1 '.repeat(size / 3),
      'AB12 '.repeat(size / 5),
      '(415) '.repeat(size / 6),
      'x@y.io '.repeat(size / 7),
    ];
    for (const text of shapes) {
      expect(text.length).toBeGreaterThanOrEqual(size - 7);
      const result = await runCheck('pii', onRequest(text), { redact: true });
      expect(result.verdict).toBe(true);
    }
    const many = await runCheck('pii', onRequest('x@y.io '.repeat(size / 7)), {});
    expect(many.data).toEqual({ found: { email: Math.floor(size / 7) } });
  });
});
