/** The files and batches routes' operations, for the OpenAPI document (shapes: OpenAI's). */
import type { Operation } from '../../core/operation.js';
import { CreateBatchBody } from './batch-body.js';

/** A file list's page size and order when the query leaves them out: every file, newest first. */
export const FILE_LIST = { maxLimit: 10_000, defaultLimit: 10_000, defaultOrder: 'desc' } as const;
/** A batch list's page size: 1 to 100, 20 when the query leaves it out (the interface's). */
export const BATCH_LIST = { maxLimit: 100, defaultLimit: 20 } as const;

const fileId = [{ name: 'file_id', in: 'path' as const, required: true, schema: { type: 'string' } }];
const batchId = [{ name: 'batch_id', in: 'path' as const, required: true, schema: { type: 'string' } }];

export const FILE_BATCH_OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/files',
    summary: 'Upload a file (multipart/form-data: file, purpose); streamed to storage',
    tags: ['Files'],
  },
  {
    method: 'get',
    path: '/files',
    summary: "List the workspace's files (purpose, limit, order, after)",
    tags: ['Files'],
    parameters: [
      { name: 'purpose', in: 'query', schema: { type: 'string' } },
      {
        name: 'limit',
        in: 'query',
        schema: { type: 'integer', minimum: 1, maximum: FILE_LIST.maxLimit, default: FILE_LIST.defaultLimit },
      },
      {
        name: 'order',
        in: 'query',
        schema: { type: 'string', enum: ['asc', 'desc'], default: FILE_LIST.defaultOrder },
      },
      { name: 'after', in: 'query', schema: { type: 'string' } },
    ],
  },
  {
    method: 'get',
    path: '/files/{file_id}',
    summary: 'Get a file object',
    tags: ['Files'],
    parameters: fileId,
  },
  {
    method: 'get',
    path: '/files/{file_id}/content',
    summary: "A file's contents (streamed)",
    tags: ['Files'],
    parameters: fileId,
  },
  {
    method: 'delete',
    path: '/files/{file_id}',
    summary: 'Delete a file',
    tags: ['Files'],
    parameters: fileId,
  },
  {
    method: 'post',
    path: '/batches',
    summary: 'Create a managed batch (completion_window "immediate"): every line through the pipeline',
    tags: ['Batches'],
    requestBody: CreateBatchBody,
  },
  {
    method: 'get',
    path: '/batches',
    summary: "List the workspace's batches, newest first (limit 1-100, default 20; after)",
    tags: ['Batches'],
    parameters: [
      {
        name: 'limit',
        in: 'query',
        schema: {
          type: 'integer',
          minimum: 1,
          maximum: BATCH_LIST.maxLimit,
          default: BATCH_LIST.defaultLimit,
        },
      },
      { name: 'after', in: 'query', schema: { type: 'string' } },
    ],
  },
  {
    method: 'get',
    path: '/batches/{batch_id}',
    summary: 'Get a batch',
    tags: ['Batches'],
    parameters: batchId,
  },
  {
    method: 'post',
    path: '/batches/{batch_id}/cancel',
    summary: 'Cancel a batch: status cancelling, then cancelled with the lines answered so far',
    tags: ['Batches'],
    parameters: batchId,
  },
];
