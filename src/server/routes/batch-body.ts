/**
 * The body of `POST /v1/batches`: one TypeBox schema that validates it, types it and documents it in the
 * OpenAPI document. The endpoint list comes from the endpoint registry, checked after the schema.
 */
import { Type, type Static } from '@sinclair/typebox';
import { GatewayError } from '../../core/errors.js';
import { checkMetadataLimits } from '../../core/metadata-limits.js';
import { compileValidator } from '../../core/validator/compile-validator.js';
import { FILE_EXPIRY_MAX_SECONDS, FILE_EXPIRY_MIN_SECONDS } from './file-expiry.js';
import { MetadataField } from './management/body-schemas.js';
import { batchEndpoints } from '../../gateway/batches/batch-endpoints.js';

export const CreateBatchBody = Type.Object(
  {
    input_file_id: Type.String({ minLength: 1, maxLength: 256 }),
    endpoint: Type.String({ description: 'A model endpoint of the gateway, e.g. `/v1/chat/completions`.' }),
    completion_window: Type.Union([Type.Literal('immediate'), Type.Literal('24h')], {
      description:
        "`immediate`: a managed batch, run by the gateway. `24h`: run on the provider's own Batch API (OpenAI, Azure OpenAI).",
    }),
    metadata: Type.Optional(Type.Union([MetadataField, Type.Null()])),
    concurrency: Type.Optional(
      Type.Union([
        Type.Integer({
          minimum: 1,
          maximum: 1000,
          description: 'Lines of this batch one node runs at once (default: `GATEWAY_BATCH_CONCURRENCY`).',
        }),
        Type.Null(),
      ]),
    ),
    output_expires_after: Type.Optional(
      Type.Object(
        {
          anchor: Type.Literal('created_at', {
            description: 'The output and error files expire this long after they are created.',
          }),
          seconds: Type.Integer({ minimum: FILE_EXPIRY_MIN_SECONDS, maximum: FILE_EXPIRY_MAX_SECONDS }),
        },
        {
          additionalProperties: false,
          description: "When the batch's output and error files expire (OpenAI's bounds: 1 hour to 30 days).",
        },
      ),
    ),
  },
  { additionalProperties: false, $id: 'CreateBatchBody' },
);

export type CreateBatch = Static<typeof CreateBatchBody>;

const validator = compileValidator(CreateBatchBody, {
  code: 'invalid_body',
  rootPath: '',
  subject: 'The request body',
  rootParam: null,
});

export function validateCreateBatch(body: unknown): CreateBatch {
  const batch = validator.assert(body);
  checkMetadataLimits(batch.metadata);
  const endpoints = [...batchEndpoints().keys()];
  if (!endpoints.includes(batch.endpoint)) {
    throw new GatewayError('invalid_body', `endpoint must be one of ${endpoints.join(', ')}`, {
      param: 'endpoint',
    });
  }
  if (batch.completion_window === '24h' && batch.concurrency != null) {
    throw new GatewayError(
      'unsupported_parameter',
      'concurrency applies to managed batches only: the provider runs a "24h" batch at its own pace',
      { param: 'concurrency' },
    );
  }
  return batch;
}
