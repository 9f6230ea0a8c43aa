/**
 * What a config version names now also counts the catalog provider a node's `override_params.model`
 * names (`"@openai-prod/gpt-4o"` on a node naming no provider or virtual key of its own), where its calls
 * go. The versions recorded before were read without it, so every config and prompt version (an inline
 * config names it too) is marked unrecorded again, as 0027 does: each is read once more and its names
 * recorded when something of its workspace is next deleted or given another provider.
 */
export { down, up } from './0027_reindex_document_references.js';
