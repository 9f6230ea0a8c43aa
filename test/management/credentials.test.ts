import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { call, client, expectError, type Client, ok } from './http.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let admin: Client;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'creds' });
  gateway = await startGateway();
  admin = client(gateway.url, gateway.adminKey);
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const KINDS = [
  {
    path: '/virtual-keys',
    object: 'virtual_key',
    // How a model call selects the stored credential.
    select: (slug: string): Record<string, string> => ({ 'x-gateway-virtual-key': slug }),
  },
  {
    path: '/providers',
    object: 'provider',
    select: (slug: string): Record<string, string> => ({ 'x-gateway-provider': `@${slug}` }),
  },
] as const;

async function chat(headers: Record<string, string>) {
  return call(
    gateway.url,
    gateway.adminKey,
    'POST',
    '/chat/completions',
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    headers,
  );
}

describe.each(KINDS)('$path', ({ path, object, select }) => {
  it('creates, reads, lists, updates and deletes, never returning a secret', async () => {
    const apiKey = `sk-mgmt-${object}-0123456789-WXYZ`;
    const created = await ok(
      admin.post(path, {
        slug: `prod-openai-${object}`,
        name: 'Production OpenAI',
        provider: 'openai',
        api_key: apiKey,
        custom_host: fake.url,
        vendora_organization: 'org-1',
      }),
    );
    expect(created.body).toMatchObject({
      object,
      id: expect.any(String),
      slug: `prod-openai-${object}`,
      name: 'Production OpenAI',
      provider: 'openai',
      status: 'active',
      kind: object,
      secret_keys: ['api_key'],
      api_key_hint: '…WXYZ',
      settings: { custom_host: fake.url, vendora_organization: 'org-1' },
    });
    expect(created.body).not.toHaveProperty('secret');
    expect(created.text).not.toContain('0123456789');

    const slug = created.body.slug as string;
    for (const address of [slug, created.body.id]) {
      const fetched = await admin.get(`${path}/${address}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body.id).toBe(created.body.id);
      expect(fetched.text).not.toContain('0123456789');
    }
    const listed = await admin.get(path);
    expect(listed.body.object).toBe('list');
    expect(listed.body.data.map((c: { slug: string }) => c.slug)).toContain(slug);
    expect(listed.text).not.toContain('0123456789');

    // The stored credential is what a model call uses.
    await ok(chat(select(slug)));
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(fake.requests.at(-1)?.headers['openai-organization']).toBe('org-1');

    // A new key takes effect on the next call; a null setting is removed; others are kept.
    const rotated = `sk-rotated-${object}-98765432`;
    const patched = await ok(
      admin.patch(`${path}/${slug}`, {
        name: 'Rotated',
        api_key: rotated,
        vendora_organization: null,
      }),
    );
    expect(patched.body).toMatchObject({
      name: 'Rotated',
      api_key_hint: '…5432',
      secret_keys: ['api_key'],
      settings: { custom_host: fake.url },
    });
    expect(patched.body.settings).not.toHaveProperty('vendora_organization');
    expect(patched.text).not.toContain(rotated);
    expect((await chat(select(slug))).status).toBe(200);
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${rotated}`);
    expect(fake.requests.at(-1)?.headers).not.toHaveProperty('openai-organization');

    const deleted = await admin.delete(`${path}/${slug}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ object: `${object}.deleted`, id: created.body.id, deleted: true });
    expectError(await admin.get(`${path}/${slug}`), 404, 'not_found', 'slug');
    // A deleted credential stops working at once.
    expectError(await chat(select(slug)), 404, 'virtual_key_not_found');
    // ...and frees its slug.
    expect((await admin.post(path, { slug, provider: 'openai', api_key: 'sk-again' })).status).toBe(200);
  });

  it('a stored secret never moves to another host or provider: a PATCH that moves it sends it again', async () => {
    const elsewhere = await startFakeOpenAI({ name: `elsewhere-${object}` });
    try {
      const slug = `pinned-${object}`;
      const secret = `sk-pinned-${object}-0123456789`;
      await ok(
        admin.post(path, {
          slug,
          provider: 'openai',
          api_key: secret,
          custom_host: fake.url,
        }),
      );
      // The same host, or a name alone, keeps the key.
      expect((await admin.patch(`${path}/${slug}`, { custom_host: fake.url, name: 'Pinned' })).status).toBe(
        200,
      );

      const error = expectError(
        await admin.patch(`${path}/${slug}`, { custom_host: elsewhere.url }),
        400,
        'invalid_body',
        'api_key',
      );
      expect(error.message).toMatch(/custom_host/);
      expectError(await admin.patch(`${path}/${slug}`, { provider: 'groq' }), 400, 'invalid_body', 'api_key');
      // Nothing moved: the next call still goes to the first host, and nothing reached the other.
      expect((await chat(select(slug))).status).toBe(200);
      expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${secret}`);
      expect(elsewhere.requests).toHaveLength(0);

      // Sent again (or removed), the move is the caller's own.
      await ok(
        admin.patch(`${path}/${slug}`, {
          custom_host: elsewhere.url,
          api_key: 'sk-other-0000',
        }),
      );
      expect((await chat(select(slug))).status).toBe(200);
      expect(elsewhere.requests.at(-1)?.headers.authorization).toBe('Bearer sk-other-0000');
    } finally {
      await elsewhere.close();
    }
  });

  it('a short api_key gets no hint; cloud secrets show as set, never as values', async () => {
    const short = await admin.post(path, {
      slug: `short-${object}`,
      provider: 'openai',
      api_key: 'sk-short',
    });
    expect(short.body).toMatchObject({ api_key_hint: null, secret_keys: ['api_key'] });
    expect(short.text).not.toContain('sk-short');

    const cloud = await ok(
      admin.post(path, {
        slug: `cloud-${object}`,
        provider: 'bedrock',
        cloudc_access_key_id: 'AKIAMGMTEXAMPLE0001',
        cloudc_secret_access_key: 'mgmt-secret-access-key-value',
        cloudc_session_token: 'mgmt-session-token-value',
        cloudc_region: 'us-east-1',
      }),
    );
    expect(cloud.body).toMatchObject({
      provider: 'bedrock',
      secret_keys: ['cloudc_access_key_id', 'cloudc_secret_access_key', 'cloudc_session_token'],
      api_key_hint: null,
      settings: { cloudc_region: 'us-east-1' },
    });
    for (const secret of [
      'AKIAMGMTEXAMPLE0001',
      'mgmt-secret-access-key-value',
      'mgmt-session-token-value',
    ]) {
      expect(cloud.text).not.toContain(secret);
    }
  });

  it('stores the canonical provider id for an alias', async () => {
    const created = await ok(
      admin.post(path, {
        slug: `alias-${object}`,
        provider: 'cloudc',
        cloudc_access_key_id: 'AKIA0000',
        cloudc_secret_access_key: 'x',
      }),
    );
    expect(created.body.provider).toBe('bedrock');
  });

  it.each([
    [{ provider: 'openai' }, 'invalid_body', 'slug'],
    [{ slug: 'has space', provider: 'openai' }, 'invalid_body', 'slug'],
    [{ slug: '-leading', provider: 'openai' }, 'invalid_body', 'slug'],
    [{ slug: 'ok' }, 'invalid_body', 'provider'],
    [{ slug: 'ok', provider: 'no-such-provider' }, 'unknown_provider', 'provider'],
    [{ slug: 'ok', provider: 'openai', api_key: 42 }, 'invalid_body', 'api_key'],
    [{ slug: 'ok', provider: 'openai', apikey: 'x' }, 'invalid_body', 'apikey'],
    [{ slug: 'ok', provider: 'openai', aws_secret_access_key: 'x' }, 'invalid_body', 'aws_secret_access_key'],
    [{ slug: 'ok', provider: 'openai', strategy: { mode: 'single' } }, 'invalid_body', 'strategy'],
    [
      { slug: 'ok', provider: 'azure-ai', cloudd_deployment_type: 'shared' },
      'invalid_body',
      'cloudd_deployment_type',
    ],
    [
      { slug: 'ok', provider: 'azure-openai', deployments: [{ alias: 'a' }] },
      'invalid_body',
      'deployments[0].deployment_id',
    ],
    [{ slug: 'ok', provider: 'openai', custom_host: 'ftp://example.com' }, 'invalid_body', 'custom_host'],
    [
      { slug: 'ok', provider: 'openai', custom_host: 'http://169.254.169.254/v1' },
      'custom_host_refused',
      'custom_host',
    ],
    [
      { slug: 'ok', provider: 'openai', custom_host: 'http://metadata.google.internal/' },
      'custom_host_refused',
      'custom_host',
    ],
    [
      {
        slug: 'ok',
        provider: 'vertex-ai',
        cloudb_region: 'us-central1',
        cloudb_service_account_json: {
          client_email: 'sa@p.iam.gserviceaccount.com',
          private_key: 'unread',
          token_uri: 'http://169.254.169.254/token',
        },
      },
      'custom_host_refused',
      'cloudb_service_account_json.token_uri',
    ],
  ])('refuses %j (%s naming %s)', async (body, code, param) => {
    expectError(await admin.post(path, body), 400, code, param);
  });

  it('PATCH validates like POST and refuses an empty patch', async () => {
    const slug = `patch-${object}`;
    await admin.post(path, { slug, provider: 'openai', api_key: 'sk-patch-original' });
    expectError(await admin.patch(`${path}/${slug}`, {}), 400, 'invalid_body', null);
    expectError(
      await admin.patch(`${path}/${slug}`, { provider: 'nope' }),
      400,
      'unknown_provider',
      'provider',
    );
    expectError(await admin.patch(`${path}/${slug}`, { api_key: 7 }), 400, 'invalid_body', 'api_key');
    expectError(await admin.patch(`${path}/${slug}`, { slug: 'renamed' }), 400, 'invalid_body', 'slug');
    expectError(
      await admin.patch(`${path}/${slug}`, { custom_host: 'http://169.254.169.254/' }),
      400,
      'custom_host_refused',
      'custom_host',
    );
    expectError(await admin.patch(`${path}/missing-${object}`, { name: 'x' }), 404, 'not_found', 'slug');
    expectError(await admin.delete(`${path}/missing-${object}`), 404, 'not_found', 'slug');
  });

  it('refuses to change the provider under configs, prompts and guardrails that name it, unless forced', async () => {
    const slug = `moved-${object}`;
    await ok(admin.post(path, { slug, provider: 'openai', api_key: 'sk-moved-0123456789' }));
    const named = object === 'virtual_key' ? { virtual_key: slug } : { provider: `@${slug}` };
    await ok(
      admin.post('/configs', {
        slug: `moved-route-${object}`,
        config: { ...named, override_params: { model: 'gpt-4o-mini' } },
      }),
    );
    await ok(
      admin.post('/prompts', {
        slug: `moved-prompt-${object}`,
        string: JSON.stringify([{ role: 'user', content: 'hi' }]),
        parameters: { model: 'gpt-4o-mini' },
        ...named,
      }),
    );
    if (object === 'virtual_key') {
      await ok(
        admin.post('/guardrails', {
          slug: 'moved-judge',
          guardrail: { 'default.modelJudge': { instructions: 'Is it polite?', virtual_key: slug } },
        }),
      );
    }
    const anthropic = { provider: 'anthropic', api_key: 'sk-ant-moved-0123456789' };

    const refused = expectError(await admin.patch(`${path}/${slug}`, anthropic), 409, 'conflict', 'provider');
    const where = object === 'virtual_key' ? 'config.virtual_key' : 'config.provider';
    expect(refused.message).toContain(`from openai to anthropic`);
    expect(refused.message).toContain(`configs "moved-route-${object}" (${where})`);
    expect(refused.message).toContain(`prompts "moved-prompt-${object}" (version 1)`);
    if (object === 'virtual_key') {
      expect(refused.message).toContain(
        'guardrails "moved-judge" (guardrail.default.modelJudge.virtual_key)',
      );
    }
    expect(refused.message).toContain('?force=true');
    // Nothing of a refused PATCH is stored.
    expect((await admin.get(`${path}/${slug}`)).body).toMatchObject({
      provider: 'openai',
      api_key_hint: '…6789',
    });

    // Rotating or removing its secret, or naming the provider it has, is never refused.
    await ok(
      admin.patch(`${path}/${slug}`, {
        provider: 'openai',
        api_key: 'sk-rotated-0123456789',
      }),
    );
    expect((await admin.patch(`${path}/${slug}`, { api_key: null })).status).toBe(200);

    const forced = await ok(admin.patch(`${path}/${slug}?force=true`, anthropic));
    expect(forced.body).toMatchObject({ provider: 'anthropic' });

    if (object === 'virtual_key') expect((await admin.delete('/guardrails/moved-judge')).status).toBe(200);
    expect((await admin.delete(`/prompts/moved-prompt-${object}`)).status).toBe(200);
    expect((await admin.delete(`/configs/moved-route-${object}`)).status).toBe(200);
    // With nothing naming it, the provider changes as any setting does.
    expect(
      (await admin.patch(`${path}/${slug}`, { provider: 'openai', api_key: 'sk-back-0123456789' })).status,
    ).toBe(200);
    expect((await admin.delete(`${path}/${slug}`)).status).toBe(200);
  });

  it('a duplicate slug is 409', async () => {
    const body = { slug: `dup-${object}`, provider: 'openai', api_key: 'sk-dup' };
    expect((await admin.post(path, body)).status).toBe(200);
    expectError(await admin.post(path, body), 409, 'conflict', 'slug');
  });
});

describeWithPostgres('concurrent PATCHes of one credential (PostgreSQL)', () => {
  const schema = freshSchemaName('credential_patches');
  let onPostgres: TestGateway;
  beforeAll(async () => {
    onPostgres = await startGateway({ postgres: { url: postgresUrl(), schema } });
  });
  afterAll(async () => {
    await onPostgres?.close();
    await dropSchema(schema);
  });

  it('each keeps the settings the others changed: a rotated api_key is never undone', async () => {
    const api = client(onPostgres.url, onPostgres.adminKey);
    const created = await ok(
      api.post('/virtual-keys', {
        slug: 'patched-at-once',
        provider: 'openai',
        api_key: 'sk-before-rotation-0',
      }),
    );
    for (let round = 1; round <= 5; round++) {
      const replies = await Promise.all([
        api.patch('/virtual-keys/patched-at-once', { api_key: `sk-after-rotation-${round}` }),
        api.patch('/virtual-keys/patched-at-once', { vendora_organization: `org-${round}` }),
        api.patch('/virtual-keys/patched-at-once', { vendora_project: `proj-${round}` }),
      ]);
      for (const reply of replies) expect(reply.status, reply.text).toBe(200);
      const stored = await onPostgres.server.deps.store.getCredential(
        created.body.workspace_id,
        'virtual_key',
        'patched-at-once',
      );
      expect(stored?.secret).toEqual({
        api_key: `sk-after-rotation-${round}`,
        vendora_organization: `org-${round}`,
        vendora_project: `proj-${round}`,
      });
    }
    // A merged secret that breaks the custom-host policy is still refused, and nothing is written.
    expectError(
      await api.patch('/virtual-keys/patched-at-once', { custom_host: 'http://169.254.169.254/v1' }),
      400,
      'custom_host_refused',
      'custom_host',
    );
    const after = await onPostgres.server.deps.store.getCredential(
      created.body.workspace_id,
      'virtual_key',
      'patched-at-once',
    );
    expect(after?.secret.custom_host).toBeUndefined();
  });
});

describe('virtual keys and catalog providers are separate namespaces', () => {
  it('the same slug may exist once in each', async () => {
    const body = { slug: 'shared-slug', provider: 'openai', api_key: 'sk-shared' };
    expect((await admin.post('/virtual-keys', body)).status).toBe(200);
    expect((await admin.post('/providers', body)).status).toBe(200);
    await admin.delete('/virtual-keys/shared-slug');
    expect((await admin.get('/providers/shared-slug')).status).toBe(200);
  });
});

describe('custom_host under the public policy', () => {
  it('refuses loopback and private addresses', async () => {
    const strict = await startGateway({ env: { GATEWAY_CUSTOM_HOST_POLICY: 'public' } });
    try {
      const strictAdmin = client(strict.url, strict.adminKey);
      for (const host of ['http://127.0.0.1:9/v1', 'http://10.1.2.3/v1', 'http://localhost:8080']) {
        expectError(
          await strictAdmin.post('/virtual-keys', { slug: 'local', provider: 'openai', custom_host: host }),
          400,
          'custom_host_refused',
          'custom_host',
        );
      }
      await ok(
        strictAdmin.post('/virtual-keys', {
          slug: 'public',
          provider: 'openai',
          custom_host: 'https://api.example.com/v1',
        }),
      );
    } finally {
      await strict.close();
    }
  });
});
