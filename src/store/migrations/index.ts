/**
 * Migrations are compiled into the program (no directory scanning), so a bundled or installed
 * gateway always carries exactly the schema its code expects. Names sort in the order they run.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001_initial.js';
import * as jobs from './0002_jobs.js';
import * as logHookResults from './0003_log_hook_results.js';
import * as guardrails from './0004_guardrails.js';
import * as prompts from './0005_prompts.js';
import * as rateLimitPolicies from './0006_rate_limit_policies.js';
import * as logRetention from './0007_log_retention.js';
import * as responses from './0008_responses.js';
import * as filesBatches from './0009_files_batches.js';
import * as semanticCache from './0010_semantic_cache.js';
import * as logCost from './0011_log_cost.js';
import * as logRollups from './0013_log_rollups.js';
import * as providerJobs from './0014_provider_jobs.js';
import * as batchProgress from './0018_batch_progress.js';
import * as filesCreatedOrder from './0019_files_created_order.js';
import * as fineTuningJobMetadata from './0020_fine_tuning_job_metadata.js';
import * as responseBackground from './0021_response_background.js';
import * as responsesStatusIndex from './0022_responses_status_index.js';
import * as fileExpiry from './0023_file_expiry.js';
import * as workspaceDeletion from './0024_workspace_deletion.js';
import * as promptPartialIncludes from './0025_prompt_partial_includes.js';
import * as documentReferences from './0026_document_references.js';
import * as reindexDocumentReferences from './0027_reindex_document_references.js';
import * as guardrailVersionReferences from './0028_guardrail_version_references.js';
import * as rateLimitWorkspaceSlugs from './0029_rate_limit_workspace_slugs.js';
import * as reindexModelProviders from './0030_reindex_model_providers.js';
import * as reindexPromptCatalogModels from './0031_reindex_prompt_catalog_models.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_jobs': jobs,
  '0003_log_hook_results': logHookResults,
  '0004_guardrails': guardrails,
  '0005_prompts': prompts,
  '0006_rate_limit_policies': rateLimitPolicies,
  '0007_log_retention': logRetention,
  '0008_responses': responses,
  '0009_files_batches': filesBatches,
  '0010_semantic_cache': semanticCache,
  '0011_log_cost': logCost,
  '0013_log_rollups': logRollups,
  '0014_provider_jobs': providerJobs,
  '0018_batch_progress': batchProgress,
  '0019_files_created_order': filesCreatedOrder,
  '0020_fine_tuning_job_metadata': fineTuningJobMetadata,
  '0021_response_background': responseBackground,
  '0022_responses_status_index': responsesStatusIndex,
  '0023_file_expiry': fileExpiry,
  '0024_workspace_deletion': workspaceDeletion,
  '0025_prompt_partial_includes': promptPartialIncludes,
  '0026_document_references': documentReferences,
  '0027_reindex_document_references': reindexDocumentReferences,
  '0028_guardrail_version_references': guardrailVersionReferences,
  '0029_rate_limit_workspace_slugs': rateLimitWorkspaceSlugs,
  '0030_reindex_model_providers': reindexModelProviders,
  '0031_reindex_prompt_catalog_models': reindexPromptCatalogModels,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
