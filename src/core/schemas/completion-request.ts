/**
 * Body of POST /v1/completions (legacy text completions). Unknown keys pass through to the provider.
 */
import { Type, type Static } from '@sinclair/typebox';
import { fieldError } from '../validator/compile-validator.js';
import {
  LogitBiasField,
  MaxTokensField,
  ModelField,
  NField,
  Nullable,
  PenaltyField,
  SeedField,
  StopField,
  StreamField,
  StreamOptionsField,
  TemperatureField,
  TextOrTokens,
  TopPField,
  UserField,
} from './common-fields.js';
import { checkStreamOptionsRule, compileRequestBodyValidator } from './request-body-validator.js';

export const CompletionRequestSchema = Type.Object(
  {
    model: ModelField,
    prompt: Nullable(TextOrTokens({ nonEmpty: false })),
    best_of: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 20, description: 'Default 1.' }))),
    echo: Type.Optional(Nullable(Type.Boolean())),
    frequency_penalty: Type.Optional(PenaltyField),
    logit_bias: Type.Optional(LogitBiasField),
    logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 5 }))),
    max_tokens: Type.Optional(MaxTokensField),
    n: Type.Optional(NField),
    presence_penalty: Type.Optional(PenaltyField),
    seed: Type.Optional(SeedField),
    stop: Type.Optional(StopField),
    stream: Type.Optional(StreamField),
    stream_options: Type.Optional(StreamOptionsField),
    suffix: Type.Optional(Nullable(Type.String())),
    temperature: Type.Optional(TemperatureField),
    top_p: Type.Optional(TopPField),
    user: Type.Optional(UserField),
  },
  { $id: 'CompletionRequest', title: 'Text completion request' },
);

export type CompletionRequest = Static<typeof CompletionRequestSchema>;

const validator = compileRequestBodyValidator(CompletionRequestSchema);

export function validateCompletionRequest(body: unknown): CompletionRequest {
  const request = validator.assert(body);
  checkCompletionRules(request);
  return request;
}

function checkCompletionRules(request: CompletionRequest): void {
  if (request.best_of != null && request.n != null && request.best_of <= request.n) {
    throw fieldError('invalid_body', 'best_of', `must be greater than n (${request.n})`);
  }
  // best_of picks among finished candidates, so there is nothing to stream until all are done.
  if (request.best_of != null && request.best_of > 1 && request.stream === true) {
    throw fieldError('invalid_body', 'best_of', 'cannot be greater than 1 when stream is true');
  }
  checkStreamOptionsRule(request);
}
