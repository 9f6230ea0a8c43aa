/**
 * What a prompt version names now also counts the catalog provider its `parameters.model` names
 * (`"@openai-prod/gpt-4o"` on a version naming no destination of its own), where its calls go. The
 * versions recorded before were read without it, so every config and prompt version is marked unrecorded
 * again, as 0027 does: each is read once more and its names recorded when something of its workspace is
 * next deleted or given another provider.
 */
export { down, up } from './0027_reindex_document_references.js';
