/** The repositories of one context (the database, or one transaction), composed into one object. */
import type { Repositories } from '../types.js';
import { createAnalyticsRepository } from './analytics.js';
import { createApiKeyRepository } from './api-keys.js';
import { createConfigRepository } from './configs.js';
import type { RepositoryContext } from './context.js';
import { createCredentialRepository } from './credentials.js';
import { createGuardrailRepository } from './guardrails.js';
import { createBatchRepository } from './batches.js';
import { createFileRepository } from './files.js';
import { createJobRepository } from './jobs.js';
import { createLogRepository } from './logs.js';
import { createOrganisationRepository } from './organisations.js';
import {
  createFineTuningJobRepository,
  createProviderBatchRepository,
  createProviderFileRepository,
} from './provider-jobs.js';
import { createPromptPartialRepository, createPromptRepository } from './prompts.js';
import { createRateLimitPolicyRepository } from './rate-limit-policies.js';
import { createReferenceRepository } from './references.js';
import { createResponseRepository } from './responses.js';
import { createSemanticCacheRepository } from './semantic-cache.js';

export function createRepositories(context: RepositoryContext): Repositories {
  return {
    ...createOrganisationRepository(context),
    ...createApiKeyRepository(context),
    ...createCredentialRepository(context),
    ...createConfigRepository(context),
    ...createGuardrailRepository(context),
    ...createReferenceRepository(context),
    ...createPromptRepository(context),
    ...createPromptPartialRepository(context),
    ...createRateLimitPolicyRepository(context),
    ...createResponseRepository(context),
    ...createSemanticCacheRepository(context),
    ...createLogRepository(context),
    ...createAnalyticsRepository(context),
    jobs: createJobRepository(context),
    files: createFileRepository(context),
    batches: createBatchRepository(context),
    fineTuningJobs: createFineTuningJobRepository(context),
    providerFiles: createProviderFileRepository(context),
    providerBatches: createProviderBatchRepository(context),
  };
}

export type { RepositoryContext } from './context.js';
