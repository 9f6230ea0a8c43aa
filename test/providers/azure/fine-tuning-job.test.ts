import { describe, expect, it } from 'vitest';
import { azureOpenAIAdapter } from '../../../src/providers/azure-openai/index.js';
import { azureDocumentedJobs } from '../../fakes/azure/fine-tuning-jobs.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';

const translate = (job: Record<string, unknown>) => azureOpenAIAdapter.resources!.fineTuningJob!(job);

describe("Azure OpenAI's fine-tuning job objects", () => {
  it.each(Object.entries(azureDocumentedJobs))(
    'the documented %s job is an OpenAI FineTuningJob',
    (_name, job) => {
      const out = translate(job);
      expectOpenAPIValid('FineTuningJob', out);
      expect(out.hyperparameters).toEqual({ n_epochs: 'auto' });
      expect(out).toMatchObject({
        id: job.id,
        model: 'curie',
        training_file: job.training_file,
        validation_file: null,
      });
    },
  );

  it('keeps what Azure says and fills what it leaves out', () => {
    expect(translate(azureDocumentedJobs.created)).toMatchObject({
      status: 'queued',
      fine_tuned_model: null,
      result_files: [],
      trained_tokens: null,
      finished_at: null,
      error: null,
      organization_id: '',
      seed: 0,
    });
    expect(translate(azureDocumentedJobs.succeeded)).toMatchObject({
      status: 'succeeded',
      fine_tuned_model: 'curie.ft-72a2792ef7d24ba7b82c7fe4a37e379f',
      result_files: ['file-181a1cbdcdcf4677ada87f63a0928099'],
      trained_tokens: 2342,
      finished_at: 1646127311,
    });
    const named = translate({
      ...azureDocumentedJobs.created,
      organisation_id: 'org-a',
      suffix: 'mine',
      seed: 105,
    });
    expect(named).toMatchObject({ organization_id: 'org-a', user_provided_suffix: 'mine', seed: 105 });
    expect(named).not.toHaveProperty('organisation_id');
    expect(named).not.toHaveProperty('suffix');
  });

  it.each([
    ['created', 'queued'],
    ['notRunning', 'queued'],
    ['pending', 'queued'],
    ['running', 'running'],
    ['succeeded', 'succeeded'],
    ['failed', 'failed'],
    ['cancelled', 'cancelled'],
    ['validating_files', 'validating_files'],
    ['queued', 'queued'],
  ])('maps the state %s to %s', (state, status) => {
    expect(translate({ ...azureDocumentedJobs.created, status }).status).toBe(status);
    expect(translate({ ...azureDocumentedJobs.created, status: state }).status).toBe(status);
  });

  it('reads -1 hyperparameters as auto and keeps chosen ones', () => {
    const out = translate({
      ...azureDocumentedJobs.created,
      hyperparameters: { n_epochs: 3, batch_size: -1, learning_rate_multiplier: -1 },
    });
    expect(out.hyperparameters).toEqual({
      n_epochs: 3,
      batch_size: 'auto',
      learning_rate_multiplier: 'auto',
    });
  });
});
