/**
 * A Vertex AI pass-through body may name resources by their project too: a generateContent's
 * cachedContent, a RAG corpus or Search datastore in its tools, a batch prediction job's model and its
 * BigQuery input and output. A stored service account's call is held to its own project there as in its
 * path; the caller's own credentials go to any project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVertex, type FakeVertex } from '../../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { client } from '../../management/http.js';

let gateway: TestGateway;
let vertex: FakeVertex;

/** The fake's service account names `test-project` as its project_id. */
const OWN_PROJECT = 'test-project';
const LOCATION = `/projects/${OWN_PROJECT}/locations/us-central1`;
const GENERATE = `${LOCATION}/publishers/google/models/gemini-2.0-flash:generateContent`;
const BATCH_JOBS = `${LOCATION}/batchPredictionJobs`;
const STORED = { 'x-gateway-virtual-key': 'vx-body-project' };

const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];
const batchJob = (extra: Record<string, unknown> = {}) => ({
  displayName: 'nightly',
  model: 'publishers/google/models/gemini-2.0-flash-001',
  inputConfig: { instancesFormat: 'jsonl', gcsSource: { uris: ['gs://in-bucket/requests.jsonl'] } },
  outputConfig: { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: 'gs://out-bucket/' } },
  ...extra,
});

function passThrough(path: string, body: string, headers: Record<string, string> = STORED) {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json', ...headers },
    body,
  });
}

const counts = () => ({ calls: vertex.requests.length, tokens: vertex.tokenRequests });

beforeAll(async () => {
  vertex = await startFakeVertex();
  gateway = await startGateway();
  const created = await client(gateway.url, gateway.adminKey).post('/virtual-keys', {
    slug: 'vx-body-project',
    provider: 'vertex-ai',
    cloudb_project_id: OWN_PROJECT,
    cloudb_region: 'us-central1',
    cloudb_service_account_json: vertex.serviceAccount,
    custom_host: vertex.url,
  });
  expect(created.status, created.text).toBe(200);
});
afterAll(async () => {
  await gateway?.close();
  await vertex?.close();
});

describe("a body naming another project's resource, signed by a stored credential", () => {
  const other = 'projects/other-project/locations/us-central1';
  it.each([
    ['cachedContent', GENERATE, { contents, cachedContent: `${other}/cachedContents/42` }],
    ['cached_content', GENERATE, { contents, cached_content: `${other}/cachedContents/42` }],
    [
      'tools[0].retrieval.vertexRagStore.ragResources[0].ragCorpus',
      GENERATE,
      {
        contents,
        tools: [
          { retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: `${other}/ragCorpora/7` }] } } },
        ],
      },
    ],
    [
      'tools[0].retrieval.vertexAiSearch.datastore',
      GENERATE,
      {
        contents,
        tools: [
          {
            retrieval: {
              vertexAiSearch: {
                datastore:
                  'projects/other-project/locations/global/collections/default_collection/dataStores/docs',
              },
            },
          },
        ],
      },
    ],
    ['model', BATCH_JOBS, batchJob({ model: `${other}/models/1234567890` })],
    [
      'model',
      BATCH_JOBS,
      batchJob({
        model: `//aiplatform.googleapis.com/${other}/publishers/google/models/gemini-2.0-flash-001`,
      }),
    ],
    [
      'inputConfig.bigquerySource.inputUri',
      BATCH_JOBS,
      batchJob({
        inputConfig: {
          instancesFormat: 'bigquery',
          bigquerySource: { inputUri: 'bq://other-project.in.requests' },
        },
      }),
    ],
    [
      'outputConfig.bigqueryDestination.outputUri',
      BATCH_JOBS,
      batchJob({
        outputConfig: {
          predictionsFormat: 'bigquery',
          bigqueryDestination: { outputUri: 'bq://other-project' },
        },
      }),
    ],
    [
      'encryptionSpec.kmsKeyName',
      BATCH_JOBS,
      batchJob({
        encryptionSpec: {
          kmsKeyName: 'projects/other-project/locations/us-central1/keyRings/r/cryptoKeys/k',
        },
      }),
    ],
    // Fields named by how they end (a name, a model, a resource, an attachment), deep in job and tool specs.
    [
      'importRagFilesConfig.ragFileParsingConfig.llmParser.modelName',
      `${LOCATION}/ragCorpora/7/ragFiles:import`,
      {
        importRagFilesConfig: {
          gcsSource: { uris: ['gs://in-bucket/docs/'] },
          ragFileParsingConfig: {
            llmParser: { modelName: `${other}/publishers/google/models/gemini-2.0-flash` },
          },
        },
      },
    ],
    [
      'importRagFilesConfig.ragFileParsingConfig.layoutParser.processorName',
      `${LOCATION}/ragCorpora/7/ragFiles:import`,
      {
        importRagFilesConfig: {
          ragFileParsingConfig: { layoutParser: { processorName: `${other}/processors/p1` } },
        },
      },
    ],
    [
      'ragVectorDbConfig.vertexFeatureStore.featureViewResourceName',
      `${LOCATION}/ragCorpora`,
      {
        displayName: 'docs',
        ragVectorDbConfig: {
          vertexFeatureStore: { featureViewResourceName: `${other}/featureOnlineStores/s/featureViews/v` },
        },
      },
    ],
    [
      'tools[0].retrieval.vertexRagStore.ragRetrievalConfig.ranking.llmRanker.modelName',
      GENERATE,
      {
        contents,
        tools: [
          {
            retrieval: {
              vertexRagStore: {
                ragResources: [{ ragCorpus: `projects/${OWN_PROJECT}/locations/us-central1/ragCorpora/c` }],
                ragRetrievalConfig: {
                  ranking: { llmRanker: { modelName: `${other}/publishers/google/models/gemini` } },
                },
              },
            },
          },
        ],
      },
    ],
    [
      'jobSpec.pscInterfaceConfig.networkAttachment',
      `${LOCATION}/customJobs`,
      {
        displayName: 'job',
        jobSpec: {
          pscInterfaceConfig: {
            networkAttachment: 'projects/other-project/regions/us-central1/networkAttachments/na',
          },
        },
      },
    ],
  ])('is refused, 403 naming %s, before any token exchange', async (param, path, body) => {
    const before = counts();
    const response = await passThrough(path, JSON.stringify(body));
    const text = await response.text();
    expect(response.status, text).toBe(403);
    const { error } = JSON.parse(text) as { error: Record<string, unknown> };
    expect(error).toMatchObject({ type: 'permission_error', code: 'forbidden', param });
    expect(error.message).toContain('"other-project"');
    expect(error.message).toContain(`"${OWN_PROJECT}"`);
    expect(counts()).toEqual(before);
  });

  it.each([
    [
      'serviceAccount',
      BATCH_JOBS,
      batchJob({ serviceAccount: 'runner@other-project.iam.gserviceaccount.com' }),
    ],
    ['serviceAccount', BATCH_JOBS, batchJob({ serviceAccount: 'other-project@appspot.gserviceaccount.com' })],
    [
      'serviceAccount',
      BATCH_JOBS,
      batchJob({ serviceAccount: '123456789012-compute@developer.gserviceaccount.com' }),
    ],
    [
      'service_account',
      `${LOCATION}/tuningJobs`,
      {
        base_model: 'gemini-2.0-flash-001',
        supervised_tuning_spec: { training_dataset_uri: 'gs://in-bucket/train.jsonl' },
        service_account: 'Tuner@Other-Project.iam.gserviceaccount.com',
      },
    ],
  ])("is refused when it runs a job as another project's service account (%s)", async (param, path, body) => {
    const before = counts();
    const response = await passThrough(path, JSON.stringify(body));
    const text = await response.text();
    expect(response.status, text).toBe(403);
    const { error } = JSON.parse(text) as { error: Record<string, unknown> };
    expect(error).toMatchObject({ type: 'permission_error', code: 'forbidden', param });
    expect(error.message).toContain(`"${OWN_PROJECT}"`);
    expect(counts()).toEqual(before);
  });

  it('is refused however the JSON writes it: escaped, or a key given twice', async () => {
    for (const body of [
      `{"contents":[],"cachedContent":"projects\\u002fother-project/locations/us-central1/cachedContents/42"}`,
      `{"cachedContent":"projects/other-project/locations/us-central1/cachedContents/42",` +
        `"cachedContent":"projects/${OWN_PROJECT}/locations/us-central1/cachedContents/42","contents":[]}`,
    ]) {
      const before = counts();
      const response = await passThrough(GENERATE, body);
      const text = await response.text();
      expect([400, 403], text).toContain(response.status);
      expect(JSON.parse(text)).toMatchObject({ error: { param: 'cachedContent' } });
      expect(counts()).toEqual(before);
    }
  });

  it('is refused when the body nests deeper than any request, rather than overflowing the stack', async () => {
    const before = counts();
    const depth = 20_000;
    const response = await passThrough(
      GENERATE,
      `{"contents":[],"x":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    );
    const text = await response.text();
    expect(response.status, text).toBe(400);
    const { error } = JSON.parse(text) as { error: Record<string, unknown> };
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_body', param: 'x' });
    expect(error.message).toContain('nested deeper than');
    expect(counts()).toEqual(before);
  });

  it('is refused when the body is not JSON, which could not be read for projects', async () => {
    const before = counts();
    const response = await passThrough(BATCH_JOBS, 'model: projects/other-project/x');
    const text = await response.text();
    expect(response.status, text).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'invalid_body', param: 'body' } });
    expect(counts()).toEqual(before);
  });
});

describe('a body a stored credential may send', () => {
  it("names the credential's own project, Vertex's publishers and Cloud Storage buckets", async () => {
    const own = `projects/${OWN_PROJECT}/locations/us-central1`;
    for (const body of [
      batchJob(),
      batchJob({
        model: `${own}/publishers/google/models/gemini-2.0-flash-001`,
        inputConfig: {
          instancesFormat: 'bigquery',
          bigquerySource: { inputUri: `bq://${OWN_PROJECT}.in.t` },
        },
        outputConfig: {
          predictionsFormat: 'bigquery',
          bigqueryDestination: { outputUri: `bq://${OWN_PROJECT}` },
        },
        serviceAccount: `runner@${OWN_PROJECT}.iam.gserviceaccount.com`,
      }),
    ]) {
      const response = await passThrough(BATCH_JOBS, JSON.stringify(body));
      const text = await response.text();
      expect(response.status, text).toBe(200);
      expect(JSON.parse(text)).toMatchObject({ state: 'JOB_STATE_PENDING', model: body.model });
      expect(vertex.requests.at(-1)?.body).toEqual(body);
    }
  });

  it('may speak of other projects in its text and function results, and keep files in folders named so', async () => {
    const name = 'projects/other-project/locations/us-central1/cachedContents/42';
    const response = await passThrough(
      GENERATE,
      JSON.stringify({
        contents: [
          { role: 'user', parts: [{ text: name }] },
          {
            role: 'user',
            parts: [
              { fileData: { mimeType: 'image/png', fileUri: 'gs://media/projects/other-project/a.png' } },
              {
                fileData: {
                  mimeType: 'image/png',
                  fileUri: 'https://storage.googleapis.com/media/projects/other-project/a.png',
                },
              },
            ],
          },
          { role: 'model', parts: [{ functionCall: { name: 'describe', args: { name } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'describe', response: { name } } }] },
        ],
      }),
    );
    expect(response.status, await response.text()).toBe(200);
  });
});

describe('a body whose words look like resource names where Vertex takes none', () => {
  const PREDICT = `${LOCATION}/publishers/google/models/text-embedding-005:predict`;
  it.each([
    [
      "an embedding instance's title",
      PREDICT,
      { instances: [{ content: 'the plan', title: 'projects/roadmap', task_type: 'RETRIEVAL_DOCUMENT' }] },
    ],
    ['a stop sequence', GENERATE, { contents, generationConfig: { stopSequences: ['projects/'] } }],
    [
      'a stop sequence written as a whole resource name',
      GENERATE,
      { contents, generation_config: { stop_sequences: ['projects/other-project/locations/x'] } },
    ],
    [
      'a Cloud Storage object URL with a projects bucket',
      GENERATE,
      {
        contents: [
          {
            role: 'user',
            parts: [
              {
                fileData: {
                  mimeType: 'application/pdf',
                  fileUri: 'https://storage.googleapis.com/projects/report.pdf',
                },
              },
            ],
          },
        ],
      },
    ],
    [
      "a batch job's input as a Cloud Storage object URL in a projects bucket",
      BATCH_JOBS,
      batchJob({
        inputConfig: {
          instancesFormat: 'jsonl',
          gcsSource: { uris: ['https://storage.googleapis.com/projects/requests.jsonl'] },
        },
      }),
    ],
  ])('is sent: %s', async (_what, path, body) => {
    const response = await passThrough(path, JSON.stringify(body));
    const text = await response.text();
    expect(response.status, text).toBe(200);
    expect(vertex.requests.at(-1)?.body).toEqual(body);
  });

  it('is still judged where Vertex takes a resource name, however the field is spelt', async () => {
    for (const [param, body] of [
      ['cached_content', { contents, cached_content: 'projects/other-project/locations/x/cachedContents/1' }],
      [
        'tools[0].retrieval.vertex_rag_store.rag_corpora[0]',
        {
          contents,
          tools: [
            {
              retrieval: {
                vertex_rag_store: { rag_corpora: ['projects/other-project/locations/x/ragCorpora/1'] },
              },
            },
          ],
        },
      ],
    ] as const) {
      const response = await passThrough(GENERATE, JSON.stringify(body));
      const text = await response.text();
      expect(response.status, text).toBe(403);
      expect(JSON.parse(text)).toMatchObject({ error: { code: 'forbidden', param } });
    }
  });
});

describe("the caller's own credentials", () => {
  it('send a body naming any project', async () => {
    const config = JSON.stringify({
      provider: 'vertex-ai',
      cloudb_region: 'us-central1',
      cloudb_project_id: OWN_PROJECT,
      cloudb_service_account_json: vertex.serviceAccount,
      custom_host: vertex.url,
    });
    const body = batchJob({
      outputConfig: {
        predictionsFormat: 'bigquery',
        bigqueryDestination: { outputUri: 'bq://other-project' },
      },
    });
    const response = await passThrough(BATCH_JOBS, JSON.stringify(body), { 'x-gateway-config': config });
    expect(response.status, await response.text()).toBe(200);
    expect(vertex.requests.at(-1)?.body).toEqual(body);
  });
});
