import { describe, expect, it } from 'vitest';
import type { TargetConfig } from '../../src/gateway/config/index.js';
import { childPath, inheritFrom } from '../../src/gateway/routing/inherit.js';

describe('inheritance down the target tree', () => {
  const parent = {
    strategy: { mode: 'fallback' },
    name: 'root',
    weight: 2,
    retry: { attempts: 2 },
    request_timeout: 5000,
    cache: { mode: 'simple' },
    cb_config: { failure_threshold: 1, cooldown_interval: 30000 },
    forward_headers: ['x-a'],
    strict_compat_compliance: false,
    override_params: { temperature: 0.2, model: 'parent-model' },
    provider: 'openai',
    api_key: 'sk-parent',
    custom_host: 'http://127.0.0.1:1/v1',
    targets: [{ provider: 'anthropic', api_key: 'sk-a' }],
  } as unknown as TargetConfig;

  it('passes settings to a child that does not set them; never tree or per-node keys', () => {
    const child = inheritFrom(parent, { name: 'c' } as TargetConfig) as Record<string, unknown>;
    expect(child).toMatchObject({
      name: 'c',
      retry: { attempts: 2 },
      request_timeout: 5000,
      cache: { mode: 'simple' },
      cb_config: { failure_threshold: 1, cooldown_interval: 30000 },
      forward_headers: ['x-a'],
      strict_compat_compliance: false,
      override_params: { temperature: 0.2, model: 'parent-model' },
    });
    expect(child.strategy).toBeUndefined();
    expect(child.targets).toBeUndefined();
    expect(child.weight).toBeUndefined();
  });

  it("keeps the child's own settings and merges override_params, the child's keys winning", () => {
    const child = inheritFrom(parent, {
      retry: { attempts: 0 },
      request_timeout: 100,
      strict_compat_compliance: true,
      override_params: { model: 'child-model' },
    } as TargetConfig);
    expect(child.retry).toEqual({ attempts: 0 });
    expect(child.request_timeout).toBe(100);
    expect(child.strict_compat_compliance).toBe(true);
    expect(child.override_params).toEqual({ temperature: 0.2, model: 'child-model' });
  });

  it('passes the provider and its credentials only to a child that names no provider of its own', () => {
    const anonymous = inheritFrom(parent, { override_params: { model: 'x' } } as TargetConfig);
    expect(anonymous).toMatchObject({
      provider: 'openai',
      api_key: 'sk-parent',
      custom_host: parent.custom_host,
    });
    const other = inheritFrom(parent, { provider: 'anthropic' } as TargetConfig);
    expect(other.api_key).toBeUndefined();
    expect(other.custom_host).toBeUndefined();
    const virtual = inheritFrom(parent, { virtual_key: 'vk' } as TargetConfig);
    expect(virtual.provider).toBeUndefined();
    expect(virtual.api_key).toBeUndefined();
  });

  it('names children by JSON path', () => {
    expect(childPath('', 1)).toBe('targets[1]');
    expect(childPath('targets[1]', 0)).toBe('targets[1].targets[0]');
  });
});
