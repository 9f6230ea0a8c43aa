// The model list of the fake: a few real OpenAI model ids plus one that names the fake, so a test can
// tell which upstream answered a pass-through `GET /models`.
const BASE_MODELS = [
  'gpt-4o-mini',
  'gpt-4o',
  'gpt-4.1-nano',
  'text-embedding-3-small',
  'gpt-3.5-turbo-instruct',
];

export function modelObject(id: string) {
  return { id, object: 'model', created: 1715367049, owned_by: 'system' };
}

export function listModels(name: string) {
  return { object: 'list', data: [...BASE_MODELS, `${name}-model`].map(modelObject) };
}
