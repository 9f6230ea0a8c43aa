/**
 * The provider's request id under the header the route's SDK reads (copyForwardableHeaders): a provider
 * that sends both names keeps its own under each, whichever order its headers come in.
 */
import { describe, expect, it } from 'vitest';
import { copyForwardableHeaders } from '../../src/gateway/attempt.js';

describe('copyForwardableHeaders', () => {
  it("keeps the provider's own header of the route's name when it sends both, in either order", () => {
    expect(
      copyForwardableHeaders(
        { 'x-request-id': 'openai_own', 'request-id': 'other' },
        { 'x-request-id': 'trace' },
        'x-request-id',
      ),
    ).toEqual({ 'x-request-id': 'openai_own', 'request-id': 'other' });
    expect(
      copyForwardableHeaders(
        { 'request-id': 'other', 'x-request-id': 'openai_own' },
        { 'x-request-id': 'trace' },
        'x-request-id',
      ),
    ).toEqual({ 'x-request-id': 'openai_own', 'request-id': 'other' });
    expect(
      copyForwardableHeaders(
        { 'x-request-id': 'other', 'request-id': 'anthropic_own' },
        { 'request-id': 'trace' },
        'request-id',
      ),
    ).toEqual({ 'x-request-id': 'other', 'request-id': 'anthropic_own' });
  });

  it("writes the other name under the route's when the provider sends only that one", () => {
    expect(
      copyForwardableHeaders({ 'request-id': 'req_a' }, { 'x-request-id': 'trace' }, 'x-request-id'),
    ).toEqual({ 'x-request-id': 'req_a', 'request-id': 'req_a' });
    expect(
      copyForwardableHeaders({ 'x-request-id': 'req_o' }, { 'request-id': 'trace' }, 'request-id'),
    ).toEqual({
      'x-request-id': 'req_o',
      'request-id': 'req_o',
    });
    expect(
      copyForwardableHeaders({ 'retry-after': '1' }, { 'x-request-id': 'trace' }, 'x-request-id'),
    ).toEqual({
      'x-request-id': 'trace',
      'retry-after': '1',
    });
  });
});
