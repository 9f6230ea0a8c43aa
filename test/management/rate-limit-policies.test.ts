/**
 * /v1/policies/rate-limits through HTTP against a real gateway, on an SQLite file and on PostgreSQL: create
 * (`{id, object}`), list with filters, pages and `total`, get, update, delete; a 400 naming the field for
 * every bad body field and query parameter; and who may name another workspace.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { client, expectError, startedWithAdmin } from './http.js';

const PATH = '/policies/rate-limits';

const valid = {
  name: 'per key',
  conditions: [{ key: 'api_key', value: '*' }],
  group_by: [{ key: 'api_key' }],
  type: 'requests',
  unit: 'rpm',
  value: 60,
};

function policyRoutes(start: () => Promise<TestGateway>): void {
  const started = startedWithAdmin(start);

  it('creates, reads, updates and deletes a policy', async () => {
    const created = await started.admin.post(PATH, {
      ...valid,
      conditions: [
        { key: 'model', value: ['@openai/*', '@anthropic/claude-3-5-haiku'], excludes: '@openai/gpt-4o' },
        { key: 'metadata.team', value: 'search' },
      ],
      group_by: [{ key: 'metadata.user' }, { key: 'model' }],
      type: 'tokens',
      unit: 'rph',
      value: 50000,
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toEqual({ id: expect.any(String), object: 'policy_usage_limits' });
    const id = created.body.id as string;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

    const read = await started.admin.get(`${PATH}/${id}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual({
      object: 'policy_usage_limits',
      id,
      name: 'per key',
      type: 'tokens',
      unit: 'rph',
      value: 50000,
      status: 'active',
      workspace_id: expect.any(String),
      organisation_id: expect.any(String),
      conditions: [
        { key: 'model', value: ['@openai/*', '@anthropic/claude-3-5-haiku'], excludes: '@openai/gpt-4o' },
        { key: 'metadata.team', value: 'search' },
      ],
      group_by: [{ key: 'metadata.user' }, { key: 'model' }],
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      last_updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });

    const updated = await started.admin.put(`${PATH}/${id}`, { value: 1000, unit: 'rpm', name: 'renamed' });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ id, value: 1000, unit: 'rpm', name: 'renamed', type: 'tokens' });
    const patched = await started.admin.patch(`${PATH}/${id}`, { status: 'archived' });
    expect(patched.body.status).toBe('archived');

    expect((await started.admin.delete(`${PATH}/${id}`)).body).toEqual({
      object: 'policy_usage_limits.deleted',
      id,
      deleted: true,
    });
    expectError(await started.admin.get(`${PATH}/${id}`), 404, 'not_found', 'id');
    expectError(await started.admin.put(`${PATH}/${id}`, { value: 1 }), 404, 'not_found', 'id');
    expectError(await started.admin.delete(`${PATH}/${id}`), 404, 'not_found', 'id');
  });

  it('lists with filters, pages and the total', async () => {
    const ids: string[] = [];
    for (const [type, unit] of [
      ['requests', 'rpd'],
      ['tokens', 'rpd'],
      ['requests', 'rpd'],
      ['requests', 'rpd'],
    ]) {
      ids.push((await started.admin.post(PATH, { ...valid, type, unit })).body.id as string);
    }
    await started.admin.put(`${PATH}/${ids[3]}`, { status: 'archived' });

    const list = await started.admin.get(`${PATH}?unit=rpd`);
    expect(list.status, list.text).toBe(200);
    expect(list.body.object).toBe('list');
    expect(list.body.total).toBe(3);
    const listed = list.body.data.map((p: { id: string }) => p.id) as string[];
    expect([...listed].sort()).toEqual(ids.slice(0, 3).sort());

    // Pages follow the list's order (oldest first; within one second, by id).
    const requestIds = listed.filter((id) => id !== ids[1]);
    const pages = [];
    for (const page of [0, 1]) {
      const reply = await started.admin.get(
        `${PATH}?unit=rpd&type=requests&page_size=1&current_page=${page}`,
      );
      expect(reply.body.total).toBe(2);
      pages.push(...reply.body.data.map((p: { id: string }) => p.id));
    }
    expect(pages).toEqual(requestIds);
    const none = await started.admin.get(`${PATH}?unit=rpd&page_size=0`);
    expect(none.body).toMatchObject({ data: [], total: 3 });
    const beyond = await started.admin.get(`${PATH}?unit=rpd&page_size=2&current_page=5`);
    expect(beyond.body).toMatchObject({ data: [], total: 3 });
    const archived = await started.admin.get(`${PATH}?unit=rpd&status=archived`);
    expect(archived.body.data.map((p: { id: string }) => p.id)).toEqual([ids[3]]);
  });

  it('names the offending field of a bad body', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...valid, conditions: [] }, 'conditions'],
      [{ ...valid, conditions: undefined }, 'conditions'],
      [{ ...valid, conditions: [{ key: 'api_key' }] }, 'conditions[0].value'],
      [{ ...valid, conditions: [{ key: 'colour', value: 'x' }] }, 'conditions[0].key'],
      [{ ...valid, conditions: [{ key: 'api_key', value: [] }] }, 'conditions[0].value'],
      [{ ...valid, conditions: [{ key: 'api_key', value: 'x', excludes: 5 }] }, 'conditions[0].excludes'],
      [{ ...valid, conditions: [{ key: 'api_key', value: 'x', other: 1 }] }, 'conditions[0].other'],
      [{ ...valid, group_by: [] }, 'group_by'],
      [{ ...valid, group_by: undefined }, 'group_by'],
      [{ ...valid, group_by: [{ key: 'metadata.' }] }, 'group_by[0].key'],
      [{ ...valid, type: 'bytes' }, 'type'],
      [{ ...valid, type: undefined }, 'type'],
      [{ ...valid, unit: 'rps' }, 'unit'],
      [{ ...valid, unit: undefined }, 'unit'],
      [{ ...valid, value: 0 }, 'value'],
      [{ ...valid, value: '10' }, 'value'],
      [{ ...valid, value: undefined }, 'value'],
      [{ ...valid, name: 'x'.repeat(256) }, 'name'],
      [{ ...valid, organisation_id: 'not-a-uuid' }, 'organisation_id'],
      [{ ...valid, workspace_id: '' }, 'workspace_id'],
      [{ ...valid, colour: 'blue' }, 'colour'],
    ];
    for (const [body, param] of cases) {
      const error = expectError(await started.admin.post(PATH, body), 400, 'invalid_body', param);
      expect(error.message, param).toContain(param);
    }
    expect((await started.admin.post(PATH, { ...valid, name: 'x'.repeat(255) })).status).toBe(200);

    const id = (await started.admin.post(PATH, valid)).body.id as string;
    expectError(await started.admin.put(`${PATH}/${id}`, { value: -1 }), 400, 'invalid_body', 'value');
    expectError(
      await started.admin.put(`${PATH}/${id}`, { status: 'paused' }),
      400,
      'invalid_body',
      'status',
    );
    expectError(
      await started.admin.put(`${PATH}/${id}`, { workspace_id: 'x' }),
      400,
      'invalid_body',
      'workspace_id',
    );
    expectError(await started.admin.put(`${PATH}/${id}`, {}), 400, 'invalid_body');
  });

  it("counts a name's 255 characters as characters (an emoji is one), and names it when it holds U+0000", async () => {
    // 255 emoji: 510 UTF-16 code units, 255 characters.
    const emoji = '\u{1F600}'.repeat(255);
    const created = await started.admin.post(PATH, { ...valid, name: emoji });
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    expect((await started.admin.get(`${PATH}/${id}`)).body.name).toBe(emoji);
    expect((await started.admin.patch(`${PATH}/${id}`, { name: `${emoji.slice(2)}é` })).status).toBe(200);
    for (const name of [`${emoji}a`, 'x'.repeat(256)]) {
      const error = expectError(
        await started.admin.post(PATH, { ...valid, name }),
        400,
        'invalid_body',
        'name',
      );
      expect(error.message).toBe('name must be at most 255 characters');
      expectError(await started.admin.patch(`${PATH}/${id}`, { name }), 400, 'invalid_body', 'name');
    }
    // Neither store is handed a name PostgreSQL cannot keep; the 400 names the field on both.
    expectError(await started.admin.post(PATH, { ...valid, name: 'a\u0000b' }), 400, 'invalid_body', 'name');
    expectError(
      await started.admin.patch(`${PATH}/${id}`, { name: 'a\u0000b' }),
      400,
      'invalid_body',
      'name',
    );
  });

  it('names the offending query parameter of a bad list', async () => {
    for (const [query, param] of [
      ['page_size=-1', 'page_size'],
      ['page_size=1.5', 'page_size'],
      ['current_page=-1', 'current_page'],
      ['current_page=x', 'current_page'],
      ['type=bytes', 'type'],
      ['unit=rps', 'unit'],
      ['status=paused', 'status'],
    ]) {
      expectError(await started.admin.get(`${PATH}?${query}`), 400, 'invalid_query', param);
    }
  });

  it('its OpenAPI entries name the workspace_id every route takes', async () => {
    const document = (await (await fetch(`${started.gateway.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters: Array<{ name: string; in: string }> }>>;
    };
    for (const [path, methods] of [
      [PATH, ['get']],
      [`${PATH}/{id}`, ['get', 'put', 'patch', 'delete']],
    ] as const) {
      for (const method of methods) {
        expect(document.paths[`/v1${path}`][method].parameters, `${method} ${path}`).toContainEqual(
          expect.objectContaining({ name: 'workspace_id', in: 'query' }),
        );
      }
    }
  });

  it('lets an organisation-level started.admin key name another workspace, and no other key', async () => {
    const made = await started.admin.post('/workspaces', { name: 'Team', slug: 'team' });
    expect(made.status, made.text).toBe(200);
    const team = made.body as { id: string; organisation_id: string; admin_key: { key: string } };
    const teamAdmin = client(started.gateway.url, team.admin_key.key);
    const member = await started.admin.post('/api-keys', { name: 'member', role: 'member' });

    // The organisation-level key (GATEWAY_ADMIN_KEY's) creates and manages the team's policy by slug or id.
    const created = await started.admin.post(PATH, {
      ...valid,
      workspace_id: 'team',
      organisation_id: team.organisation_id,
    });
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    expect((await started.admin.get(`${PATH}/${id}?workspace_id=${team.id}`)).body.workspace_id).toBe(
      team.id,
    );
    expect((await started.admin.get(`${PATH}/${id}`)).body.workspace_id).toBe(team.id);
    expect((await teamAdmin.get(`${PATH}/${id}`)).body.workspace_id).toBe(team.id);
    expect((await started.admin.get(`${PATH}?workspace_id=team`)).body.total).toBe(1);

    // The team's own started.admin key works in its workspace only.
    const home = (await started.admin.get('/api-keys')).body.data[0].workspace_id as string;
    expectError(
      await teamAdmin.post(PATH, { ...valid, workspace_id: home }),
      403,
      'forbidden',
      'workspace_id',
    );
    expectError(await teamAdmin.get(`${PATH}?workspace_id=${home}`), 403, 'forbidden', 'workspace_id');
    expect((await teamAdmin.post(PATH, { ...valid, workspace_id: 'team' })).status).toBe(200);
    // Whether a workspace it may not act on exists is not told: 403 for one that does and one that does not.
    const absent = expectError(
      await teamAdmin.get(`${PATH}?workspace_id=nowhere`),
      403,
      'forbidden',
      'workspace_id',
    );
    const present = expectError(
      await teamAdmin.get(`${PATH}?workspace_id=default`),
      403,
      'forbidden',
      'workspace_id',
    );
    expect(absent.message).toBe(present.message);
    // A UUID is the same UUID in capitals (as .NET and SQL Server write them).
    const upper = await started.admin.post(PATH, {
      ...valid,
      organisation_id: team.organisation_id.toUpperCase(),
    });
    expect(upper.status, upper.text).toBe(200);
    // Another organisation, or a workspace that is not there, is never seen.
    expectError(
      await started.admin.post(PATH, { ...valid, organisation_id: '00000000-0000-4000-8000-000000000000' }),
      404,
      'not_found',
      'organisation_id',
    );
    expectError(
      await started.admin.post(PATH, { ...valid, workspace_id: 'nowhere' }),
      404,
      'not_found',
      'workspace_id',
    );
    // A member key manages nothing.
    expectError(await client(started.gateway.url, member.body.key).get(PATH), 403, 'forbidden');
  });

  it('stores a workspace_id condition written as a workspace slug as its id, and refuses one naming no workspace', async () => {
    const own = await started.admin.get(
      `${PATH}/${(await started.admin.post(PATH, valid)).body.id as string}`,
    );
    const workspaceId = own.body.workspace_id as string;
    const workspaces = await started.gateway.server.deps.store.listWorkspaces(
      own.body.organisation_id as string,
    );
    const slug = workspaces.find((w) => w.id === workspaceId)!.slug;
    expect(slug).not.toBe(workspaceId);

    const created = await started.admin.post(PATH, {
      ...valid,
      conditions: [
        { key: 'workspace_id', value: slug },
        { key: 'workspace_id', value: [slug, '*'], excludes: [workspaceId] },
      ],
    });
    expect(created.status, created.text).toBe(200);
    const read = await started.admin.get(`${PATH}/${created.body.id as string}`);
    expect(read.body.conditions).toEqual([
      { key: 'workspace_id', value: workspaceId },
      { key: 'workspace_id', value: [workspaceId, '*'], excludes: [workspaceId] },
    ]);
    const updated = await started.admin.patch(`${PATH}/${created.body.id as string}`, {
      conditions: [{ key: 'workspace_id', value: '*', excludes: slug }],
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.conditions).toEqual([{ key: 'workspace_id', value: '*', excludes: workspaceId }]);

    const nowhere = { key: 'workspace_id', value: 'no-such-workspace' };
    const error = expectError(
      await started.admin.post(PATH, { ...valid, conditions: [valid.conditions[0], nowhere] }),
      400,
      'invalid_body',
      'conditions[1].value',
    );
    expect(error.message).toContain('no-such-workspace');
    expectError(
      await started.admin.patch(`${PATH}/${created.body.id as string}`, {
        conditions: [{ key: 'workspace_id', value: '*', excludes: ['nowhere'] }],
      }),
      400,
      'invalid_body',
      'conditions[0].excludes',
    );
  });

  it("refuses a workspace admin's workspace_id condition naming another workspace, 403 whether it exists or not", async () => {
    const made = await started.admin.post('/workspaces', { name: 'Squad', slug: 'squad' });
    expect(made.status, made.text).toBe(200);
    const squad = made.body as { id: string; admin_key: { key: string } };
    const squadAdmin = client(started.gateway.url, squad.admin_key.key);
    const naming = (value: string | string[], excludes?: string) => ({
      ...valid,
      conditions: [valid.conditions[0], { key: 'workspace_id', value, ...(excludes && { excludes }) }],
    });

    const present = expectError(
      await squadAdmin.post(PATH, naming('default')),
      403,
      'forbidden',
      'conditions[1].value',
    );
    const absent = expectError(
      await squadAdmin.post(PATH, naming('no-such-workspace')),
      403,
      'forbidden',
      'conditions[1].value',
    );
    expect(absent.message).toBe(present.message);
    expect(present.message).not.toContain('default');
    const home = (await started.admin.get('/api-keys')).body.data[0].workspace_id as string;
    expectError(
      await squadAdmin.post(PATH, naming(['squad', home])),
      403,
      'forbidden',
      'conditions[1].value',
    );
    expectError(
      await squadAdmin.post(PATH, naming('*', 'default')),
      403,
      'forbidden',
      'conditions[1].excludes',
    );

    // Its own workspace, by slug or id, and the patterns, are taken; the slug is stored as the id.
    const created = await squadAdmin.post(PATH, naming(['squad', squad.id, '*'], 'squad'));
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    expect((await squadAdmin.get(`${PATH}/${id}`)).body.conditions[1]).toEqual({
      key: 'workspace_id',
      value: [squad.id, squad.id, '*'],
      excludes: squad.id,
    });
    expectError(
      await squadAdmin.patch(`${PATH}/${id}`, { conditions: [{ key: 'workspace_id', value: 'default' }] }),
      403,
      'forbidden',
      'conditions[0].value',
    );
    const read = await squadAdmin.get(`${PATH}/${id}`);
    expect(read.text).not.toContain(home);

    // The organisation-level key may still name any workspace of the organisation.
    const byOrganisation = await started.admin.post(PATH, {
      ...naming('squad'),
      workspace_id: squad.id,
    });
    expect(byOrganisation.status, byOrganisation.text).toBe(200);
  });

  it('stores a policy in the workspace its workspace_id conditions name when the body names none, and refuses a contradiction', async () => {
    const made = await started.admin.post('/workspaces', { name: 'Crew', slug: 'crew' });
    expect(made.status, made.text).toBe(200);
    const crew = made.body as { id: string; admin_key: { key: string } };
    const other = (await started.admin.post('/workspaces', { name: 'Band', slug: 'band' })).body as {
      id: string;
    };
    const home = (await started.admin.get('/api-keys')).body.data[0].workspace_id as string;
    const naming = (...values: Array<string | string[]>) => ({
      ...valid,
      conditions: [valid.conditions[0], ...values.map((value) => ({ key: 'workspace_id', value }))],
    });
    const workspaceOf = async (reply: { status: number; text: string; body: { id?: string } }) => {
      expect(reply.status, reply.text).toBe(200);
      const policies = await started.gateway.server.deps.store.listRateLimitPolicies({
        workspace_id: crew.id,
      });
      const policy = policies.data.find((p) => p.id === reply.body.id);
      return policy?.workspace_id ?? 'elsewhere';
    };

    // By slug, by id, twice, or beside a pattern: the one workspace named is the policy's.
    expect(await workspaceOf(await started.admin.post(PATH, naming('crew')))).toBe(crew.id);
    expect(await workspaceOf(await started.admin.post(PATH, naming([crew.id, 'crew'], crew.id)))).toBe(
      crew.id,
    );
    expect(await workspaceOf(await started.admin.post(PATH, naming(['crew', '*'])))).toBe(crew.id);
    // A pattern alone names no workspace: the policy is the caller's.
    expect(await workspaceOf(await started.admin.post(PATH, naming('*')))).toBe('elsewhere');

    // Two workspaces at once: a policy governs the calls of one.
    for (const [body, param] of [
      [naming(['crew', 'band']), 'conditions[1].value'],
      [naming('crew', other.id), 'conditions[2].value'],
      [naming('*', ['band', 'crew']), 'conditions[2].value'],
    ] as const) {
      const error = expectError(await started.admin.post(PATH, body), 400, 'invalid_body', param);
      expect(error.message).toContain('one workspace');
    }
    // A body workspace_id the conditions contradict.
    const contradicted = expectError(
      await started.admin.post(PATH, { ...naming('crew'), workspace_id: home }),
      400,
      'invalid_body',
      'conditions[1].value',
    );
    expect(contradicted.message).toContain('workspace_id');
    expectError(
      await started.admin.post(PATH, { ...naming(['crew', '*']), workspace_id: 'band' }),
      400,
      'invalid_body',
      'conditions[1].value',
    );
    expect(
      await workspaceOf(await started.admin.post(PATH, { ...naming('crew'), workspace_id: crew.id })),
    ).toBe(crew.id);
    // An update cannot move a policy: conditions naming another workspace than its own are refused.
    const homePolicy = (await started.admin.post(PATH, valid)).body.id as string;
    expectError(
      await started.admin.patch(`${PATH}/${homePolicy}`, {
        conditions: [{ key: 'workspace_id', value: 'crew' }],
      }),
      400,
      'invalid_body',
      'conditions[0].value',
    );
    // The workspace's own admin key still names only its own workspace.
    const crewAdmin = client(started.gateway.url, crew.admin_key.key);
    expectError(await crewAdmin.post(PATH, naming('band')), 403, 'forbidden', 'conditions[1].value');
    expect(await workspaceOf(await crewAdmin.post(PATH, naming('crew')))).toBe(crew.id);
  });

  it('finds a policy by its id alone in any workspace of the organisation for an organisation-level key, and in its own for a workspace key', async () => {
    const made = await started.admin.post('/workspaces', { name: 'Desk', slug: 'desk' });
    expect(made.status, made.text).toBe(200);
    const desk = made.body as { id: string; admin_key: { key: string } };
    const deskAdmin = client(started.gateway.url, desk.admin_key.key);
    const home = (await started.admin.get('/api-keys')).body.data[0].workspace_id as string;
    const inDesk = (await started.admin.post(PATH, { ...valid, workspace_id: 'desk' })).body.id as string;
    const inHome = (await started.admin.post(PATH, valid)).body.id as string;

    // The organisation-level key reads, updates and deletes the desk's policy by its id.
    const read = await started.admin.get(`${PATH}/${inDesk}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toMatchObject({ id: inDesk, workspace_id: desk.id });
    const updated = await started.admin.put(`${PATH}/${inDesk}`, { value: 7 });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ id: inDesk, value: 7, workspace_id: desk.id });
    const patched = await started.admin.patch(`${PATH}/${inDesk}`, {
      conditions: [{ key: 'workspace_id', value: 'desk' }],
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.conditions).toEqual([{ key: 'workspace_id', value: desk.id }]);
    expect((await deskAdmin.get(`${PATH}/${inDesk}`)).body.value).toBe(7);
    // A query workspace_id still narrows it to that workspace.
    expect((await started.admin.get(`${PATH}/${inDesk}?workspace_id=desk`)).status).toBe(200);
    expectError(await started.admin.get(`${PATH}/${inDesk}?workspace_id=${home}`), 404, 'not_found', 'id');
    expectError(await started.admin.delete(`${PATH}/${inDesk}?workspace_id=${home}`), 404, 'not_found', 'id');

    // The desk's key sees its own workspace only: the home policy is as absent as an id nobody has.
    const hidden = expectError(await deskAdmin.get(`${PATH}/${inHome}`), 404, 'not_found', 'id');
    const absent = expectError(
      await deskAdmin.get(`${PATH}/00000000-0000-4000-8000-000000000000`),
      404,
      'not_found',
      'id',
    );
    expect(hidden.message.replace(inHome, 'ID')).toBe(absent.message.replace(/00000000-[0-9a-f-]+/, 'ID'));
    expectError(await deskAdmin.put(`${PATH}/${inHome}`, { value: 1 }), 404, 'not_found', 'id');
    expectError(await deskAdmin.delete(`${PATH}/${inHome}`), 404, 'not_found', 'id');
    expect((await started.admin.get(`${PATH}/${inHome}`)).body.value).toBe(60);

    const deleted = await started.admin.delete(`${PATH}/${inDesk}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ object: 'policy_usage_limits.deleted', id: inDesk, deleted: true });
    expectError(await deskAdmin.get(`${PATH}/${inDesk}`), 404, 'not_found', 'id');
    expectError(await started.admin.get(`${PATH}/${inDesk}`), 404, 'not_found', 'id');
  });

  it('answers a page_size past 1000 with pages of 1000, as the interface sets page_size no maximum', async () => {
    const first = await started.admin.post(PATH, { ...valid, type: 'tokens', unit: 'rpm' });
    expect(first.status, first.text).toBe(200);
    const { workspace_id, organisation_id } = (await started.admin.get(`${PATH}/${first.body.id as string}`))
      .body;
    for (let i = 0; i < 1000; i++) {
      await started.gateway.server.deps.store.createRateLimitPolicy({
        workspace_id,
        organisation_id,
        name: `page ${i}`,
        type: 'tokens',
        unit: 'rpm',
        value: 60,
        conditions: valid.conditions,
        group_by: valid.group_by,
      });
    }
    const ids = async (query: string) => {
      const reply = await started.admin.get(`${PATH}?type=tokens&unit=rpm&${query}`);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.total).toBeGreaterThan(1000);
      return reply.body.data.map((p: { id: string }) => p.id) as string[];
    };
    const [firstPage, secondPage] = [await ids('page_size=1000'), await ids('page_size=1000&current_page=1')];
    expect(firstPage).toHaveLength(1000);
    expect(secondPage.length).toBeGreaterThan(0);
    expect(await ids('page_size=5000')).toEqual(firstPage);
    expect(await ids('page_size=5000&current_page=1')).toEqual(secondPage);
  });
}

describe('rate-limit policies (SQLite)', () => {
  policyRoutes(() => startGateway());
});

describeWithPostgres('rate-limit policies (PostgreSQL)', () => {
  const schema = freshSchemaName('rate_limit_policies');
  afterAll(async () => dropSchema(schema));
  policyRoutes(() => startGateway({ postgres: { url: postgresUrl(), schema } }));
});
