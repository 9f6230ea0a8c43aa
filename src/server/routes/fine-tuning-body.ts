/**
 * The body of `POST /v1/fine_tuning/jobs` (OpenAI's `CreateFineTuningJobRequest`): one TypeBox schema that
 * validates it, types it and documents it. The provider checks what only it can (the model, the files'
 * contents); the gateway refuses early what OpenAI's API would refuse anyway.
 */
import { Type, type Static } from '@sinclair/typebox';
import { GatewayError } from '../../core/errors.js';
import { checkMetadataLimits } from '../../core/metadata-limits.js';
import { compileValidator } from '../../core/validator/compile-validator.js';
import { MetadataField } from './management/body-schemas.js';

const Auto = Type.Literal('auto');

/** The run tracker a job reports to: OpenAI's `wandb`, which the gateway's interface names `tracker_a`. */
const Tracker = Type.Object({
  project: Type.String({ minLength: 1 }),
  name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  entity: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  tags: Type.Optional(Type.Array(Type.String())),
});

export const CreateFineTuningJobBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256, description: 'The base model to fine-tune.' }),
    training_file: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'A gateway file id (`file_…`, sent to the provider once) or a provider file id.',
    }),
    validation_file: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()])),
    suffix: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
    hyperparameters: Type.Optional(
      Type.Object(
        {
          batch_size: Type.Optional(Type.Union([Auto, Type.Integer({ minimum: 1, maximum: 256 })])),
          learning_rate_multiplier: Type.Optional(Type.Union([Auto, Type.Number({ exclusiveMinimum: 0 })])),
          n_epochs: Type.Optional(Type.Union([Auto, Type.Integer({ minimum: 1, maximum: 50 })])),
        },
        { additionalProperties: false },
      ),
    ),
    integrations: Type.Optional(
      Type.Union([
        Type.Array(
          Type.Object({
            type: Type.Union([Type.Literal('wandb'), Type.Literal('tracker_a')]),
            wandb: Type.Optional(Tracker),
            tracker_a: Type.Optional(Tracker),
          }),
          {
            maxItems: 5,
            description:
              'At most 5. `{type: "wandb", wandb: {…}}` as OpenAI writes it, or `{type: "tracker_a", tracker_a: {…}}` as the gateway\'s interface does: the same tracker, sent to the provider as `wandb`.',
          },
        ),
        Type.Null(),
      ]),
    ),
    seed: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 2147483647 }), Type.Null()])),
    /** OpenAI's `method` (supervised, dpo, reinforcement) is the provider's to check. */
    method: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    metadata: Type.Optional(Type.Union([MetadataField, Type.Null()])),
  },
  { additionalProperties: false, $id: 'CreateFineTuningJobBody' },
);

export type CreateFineTuningJob = Static<typeof CreateFineTuningJobBody>;

const validator = compileValidator(CreateFineTuningJobBody, {
  code: 'invalid_body',
  rootPath: '',
  subject: 'The request body',
  rootParam: null,
});

/** The body, its integrations as the provider takes them (`wandb`, whichever name the client used). */
export function validateCreateFineTuningJob(body: unknown): CreateFineTuningJob {
  const job = validator.assert(body);
  checkMetadataLimits(job.metadata);
  if (!job.integrations) return job;
  const integrations = job.integrations.map((integration, i) => {
    const tracker = integration[integration.type];
    if (tracker === undefined) {
      throw new GatewayError(
        'invalid_body',
        `An integration of type ${integration.type} needs its settings in ${integration.type}`,
        { param: `integrations[${i}].${integration.type}` },
      );
    }
    return { type: 'wandb' as const, wandb: tracker };
  });
  return { ...job, integrations };
}
