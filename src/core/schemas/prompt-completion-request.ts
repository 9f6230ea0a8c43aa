/**
 * Body of POST /v1/prompts/{promptId}/completions and …/render: the template's variables, and any chat or
 * completion field, which overrides the value the prompt's version holds (`stream` always comes from
 * here). The fields themselves are checked once merged, by the body schema of the prompt's endpoint.
 */
import { Type, type Static } from '@sinclair/typebox';
import { compileRequestBodyValidator } from './request-body-validator.js';

export const PromptCompletionRequestSchema = Type.Object(
  {
    variables: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'Values for the template: strings, numbers, booleans, lists and objects (lists and objects for ' +
        'sections). Every variable the template reads outside a section is required.',
    }),
    allow_unknown_variables: Type.Optional(
      Type.Boolean({
        description:
          'true: variables the template does not read are ignored. By default (false) they are refused ' +
          'with a 400 naming them, so a misspelt name is not silently dropped.',
      }),
    ),
    stream: Type.Optional(Type.Boolean({ description: 'Default false; never taken from the template.' })),
  },
  {
    additionalProperties: true,
    $id: 'PromptCompletionRequest',
    description:
      'Any other field is a chat (or text) completion field that overrides the prompt version’s parameters.',
  },
);

export type PromptCompletionRequest = Static<typeof PromptCompletionRequestSchema>;

const validator = compileRequestBodyValidator(PromptCompletionRequestSchema);

export function validatePromptCompletionRequest(body: unknown): PromptCompletionRequest {
  return validator.assert(body);
}
