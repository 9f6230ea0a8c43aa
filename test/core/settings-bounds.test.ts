/**
 * A setting out of its range stops the start with a message naming it, before anything is written: a
 * PORT past 65535 was taken, the first start's admin key made and printed, and the start then failed on
 * Node's own RangeError.
 */
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/settings.js';

describe('settings bounds', () => {
  it('refuses a PORT that is no TCP port', () => {
    expect(() => loadSettings({ PORT: '70000' })).toThrow(
      'Setting PORT must be an integer from 0 to 65535, got "70000"',
    );
    expect(() => loadSettings({ PORT: '-1' })).toThrow(
      'Setting PORT must be an integer from 0 to 65535, got "-1"',
    );
    expect(loadSettings({ PORT: '65535' }).port).toBe(65535);
    expect(loadSettings({ PORT: '0' }).port).toBe(0);
  });
});
