/**
 * A Vertex AI pass-through body names resources by their project as its path does: a generateContent's
 * `cachedContent`, a RAG corpus or Vertex AI Search datastore in its `tools`, a batch prediction job's
 * `model`, its BigQuery input and output (`bq://{project}.{dataset}`), a customer-managed key's
 * `kmsKeyName`. Vertex reaches them with the signing service account's own permissions, so a stored
 * credential's body, like its path (vertex-ai-passthrough-project.ts), may name its own project only.
 *
 * What is judged is a string under a field where Vertex takes a resource name (RESOURCE_FIELDS: `model`,
 * `cachedContent`, `ragCorpus`, `datastore`, `inputUri`, `outputUri`, `kmsKeyName`, …, however deep, alone
 * or in an array), by its JSON name or its proto name (`cached_content`: Vertex takes both), and written as
 * one — `projects/…`, `//aiplatform.googleapis.com/projects/…`, a googleapis.com URL, a `bq://` URI — or
 * as a service account's email: a job runs as its `serviceAccount`, and one of another project's
 * (`runner@other.iam.gserviceaccount.com`) would reach what that project granted it.
 * Anything else a body says — an instance's title, a stop sequence, a file's URL — is the caller's words or
 * data, which may look like a resource name without Vertex reading it as one; and nothing under the keys that
 * hold the conversation and its schemas (a text, a function's arguments and result, a schema) is judged,
 * whatever its field. A Cloud Storage URI (`gs://bucket/…`, `https://storage.googleapis.com/bucket/…`)
 * names a bucket, not its project, and is not judged. The body must be JSON read one
 * way only: a key given twice in an object (read as the last by one parser and the first by another) is
 * refused, as is a body that is not JSON. A pass-through body does not go through the /v1 JSON parser, so
 * the depth bound every other body is held to (core/body-depth.ts) is applied here, before it is walked.
 */
import { assertBodyDepth } from '../../core/body-depth.js';
import { GatewayError } from '../../core/errors.js';
import type { PassthroughCall } from '../types.js';
import {
  bigQueryProject,
  otherProject,
  otherProjectRefused,
  percentDecoded,
  projectsNamed,
  serviceAccountProject,
  targetProject,
} from './vertex-ai-project-names.js';

/** Keys (lower case, without `_`) whose values are the conversation or a schema, never a resource used. */
const SPOKEN_OF: ReadonlySet<string> = new Set([
  'text',
  'content',
  'system',
  'prompt',
  'args',
  'partialargs',
  'response',
  'data',
  'code',
  'output',
  'description',
  'displayname',
  'parameters',
  'parametersjsonschema',
  'responseschema',
  'responsejsonschema',
  'schema',
  'inputschema',
]);

export function refuseOtherProjectInBody(call: PassthroughCall, body: Uint8Array): void {
  if (!call.storedCredential || body.byteLength === 0) return;
  const parsed = readJson(body);
  const own = targetProject(call.target);
  visit(parsed, '', undefined, (value, param) => {
    const other = otherProject(projectsOf(value), own);
    if (other !== undefined) throw otherProjectRefused(param, other, own, { param });
  });
}

function readJson(body: Uint8Array): unknown {
  let text: string;
  let parsed: unknown;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    parsed = JSON.parse(text);
  } catch {
    throw new GatewayError(
      'invalid_body',
      'With a stored vertex-ai credential a pass-through body must be JSON: it is read for the projects it names',
      { param: 'body' },
    );
  }
  const twice = keyGivenTwice(text);
  if (twice !== undefined) {
    throw new GatewayError(
      'invalid_body',
      `With a stored vertex-ai credential a pass-through body may not give a key twice in one object (${twice})`,
      { param: twice },
    );
  }
  assertBodyDepth(parsed);
  return parsed;
}

/** A string literal, then the colon that makes it a key, or a brace, in JSON text (read whole, so that a
 * brace or colon inside a string is not taken for one outside). */
const KEY_OR_BRACE = /"(?:[^"\\]|\\.)*"(\s*:)?|[{}]/g;

/** The first key of (valid JSON) `text` given twice in one object, as decoded; undefined when none is. */
function keyGivenTwice(text: string): string | undefined {
  const objects: Array<Set<string>> = [];
  for (const [token, colon] of text.matchAll(KEY_OR_BRACE)) {
    if (token === '{') objects.push(new Set());
    else if (token === '}') objects.pop();
    else if (colon !== undefined) {
      const key = JSON.parse(token.slice(0, token.length - colon.length)) as string;
      const keys = objects.at(-1);
      if (keys?.has(key)) return key;
      keys?.add(key);
    }
  }
  return undefined;
}

/**
 * Keys (lower case, without `_`) under which Vertex takes a resource name: a model or an endpoint (a batch
 * job's, a tuning job's base or pre-tuned model, an embedding model's endpoint), a cached content, a RAG
 * corpus or file, a Vertex AI Search datastore or engine, a dataset, a BigQuery source or destination, a
 * customer-managed key, the service account a job runs as, a network, a Secret Manager version (a RAG
 * import's API key), a job's parent or name.
 */
const RESOURCE_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'models',
  'basemodel',
  'sourcemodel',
  'tunedmodelname',
  'endpoint',
  'indexendpoint',
  'index',
  'cachedcontent',
  'ragcorpus',
  'ragcorpora',
  'ragfile',
  'datastore',
  'datastores',
  'engine',
  'servingconfig',
  'dataset',
  'datasets',
  'inputuri',
  'outputuri',
  'outputuriprefix',
  'uri',
  'uris',
  'kmskeyname',
  'serviceaccount',
  'network',
  'apikeysecretversion',
  'apikeysecret',
  'secretversion',
  'tensorboard',
  'experiment',
  'parent',
  'name',
  'resourcename',
]);

/**
 * How the names of the fields that take a resource name end, beyond RESOURCE_FIELDS: Vertex keeps adding
 * such fields deep in its job and tool specs (a RAG import's `llmParser.modelName`, a layout parser's
 * `processorName`, a feature view's `featureViewResourceName`, an evaluation's `autoraterModel`, a job's
 * `networkAttachment`, a deployed model's `sharedResources`), and a list of names alone would miss each new
 * one. A display name is words, not a resource (`tunedModelDisplayName`).
 */
const RESOURCE_FIELD_ENDINGS = [
  'name',
  'names',
  'model',
  'models',
  'uri',
  'uris',
  'resource',
  'resources',
  'attachment',
  'endpoint',
  'endpoints',
  'network',
  'serviceaccount',
] as const;

/** Whether Vertex takes a resource name under the field (as fieldOf writes it). */
function takesResource(field: string): boolean {
  if (RESOURCE_FIELDS.has(field)) return true;
  if (field.endsWith('displayname')) return false;
  return RESOURCE_FIELD_ENDINGS.some((ending) => field.endsWith(ending));
}

/** The key as RESOURCE_FIELDS and SPOKEN_OF hold it: its JSON name and its proto name alike. */
function fieldOf(key: string): string {
  return key.toLowerCase().replaceAll('_', '');
}

/**
 * Calls `judge` with every string of `value` whose nearest key takes a resource name (takesResource; an array's items
 * are under the array's key), outside the keys SPOKEN_OF, and where it is.
 */
function visit(
  value: unknown,
  at: string,
  field: string | undefined,
  judge: (value: string, param: string) => void,
): void {
  if (typeof value === 'string') {
    if (field !== undefined && takesResource(field)) judge(value, at || 'body');
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => visit(item, `${at}[${i}]`, field, judge));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const named = fieldOf(key);
      if (SPOKEN_OF.has(named)) continue;
      visit(item, at ? `${at}.${key}` : key, named, judge);
    }
  }
}

/**
 * The projects a string names when it is written as a resource name: one that starts with
 * `projects/{project}/…` (also after a `/`), a full resource name (`//{service}.googleapis.com/projects/…`), a
 * URL of Google's APIs (`https://{host}.googleapis.com/v1/projects/…`), percent-decoded; a BigQuery URI; a
 * service account's email.
 * Any other string (a bucket's `gs://` URI, an object path with a `projects` folder in it, a URL elsewhere,
 * words) names none.
 */
function projectsOf(value: string): string[] {
  const written = value.trim();
  if (/\s/.test(written)) return [];
  const bigQuery = bigQueryProject(written);
  if (bigQuery !== undefined) return [bigQuery];
  const account = serviceAccountProject(written);
  if (account !== undefined) return [account];
  let path = percentDecoded(written);
  const address = /^(?:[a-z][a-z0-9+.-]*:)?\/\/([^/?#]*)(.*)$/i.exec(path);
  if (address) {
    const host = address[1].toLowerCase().replace(/:\d+$/, '');
    if (host !== 'googleapis.com' && !host.endsWith('.googleapis.com')) return [];
    // Cloud Storage's URLs name a bucket and an object (`storage.googleapis.com/{bucket}/…`), never a project.
    if (host === 'storage.googleapis.com' || host.endsWith('.storage.googleapis.com')) return [];
    // A URL's path starts with the API version (`/v1/`, `/v1beta1/`), a full resource name's does not.
    path = address[2].replace(/^[/\\]+v\d\w*(?=[/\\])/i, '');
  }
  path = path.replace(/^[/\\]+/, '');
  return /^projects[/\\]/i.test(path) ? projectsNamed(path) : [];
}
