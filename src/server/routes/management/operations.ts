import type { Operation } from '../../openapi.js';

/** The management API's operations, for the OpenAPI document. */
export const MANAGEMENT_OPERATIONS: Operation[] = [];
