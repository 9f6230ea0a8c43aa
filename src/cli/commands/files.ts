/** `gateway files …`: upload (streamed from disk), list, get, download (streamed to disk) and delete. */
import { constants, createWriteStream, openAsBlob } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Command } from 'commander';
import { CliError, type ApiClient } from '../api-client.js';
import { commandContext } from '../context.js';
import { formatTable } from '../format-table.js';
import type { CliIo } from '../io.js';
import { parseInteger } from '../parse-values.js';

export interface FileObject {
  id: string;
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
}

/** Refuses, naming it, a path that is not a file the CLI may read: otherwise the upload fails as it is
 * sent, which looks like a gateway that cannot be reached. */
async function checkReadableFile(path: string): Promise<void> {
  try {
    const stats = await stat(path);
    if (!stats.isFile()) {
      throw new CliError(`${path} is not a file${stats.isDirectory() ? ' (it is a directory)' : ''}`);
    }
    await access(path, constants.R_OK);
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new CliError(`Cannot read ${path}: ${reason}`);
  }
}

export async function uploadFile(api: ApiClient, path: string, purpose: string): Promise<FileObject> {
  await checkReadableFile(path);
  const form = new FormData();
  form.set('purpose', purpose);
  // A Blob backed by the file: its bytes are read as the request is sent, not loaded first.
  form.set('file', await openAsBlob(path), basename(path));
  return api.upload<FileObject>('/files', form);
}

/** Writes a file's contents to `output`, or to stdout when there is none. */
export async function downloadFile(api: ApiClient, io: CliIo, id: string, output: string | undefined) {
  const response = await api.download(`/files/${encodeURIComponent(id)}/content`);
  if (!response.body) return;
  const body = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  if (output) {
    await pipeline(body, createWriteStream(output));
    return;
  }
  // Bytes as they come: decoding each chunk as text would break a character split between two chunks,
  // and every binary file.
  for await (const chunk of body) await io.stdout(chunk as Uint8Array);
}

const fileTable = (files: FileObject[]) =>
  formatTable(files, [
    { header: 'ID', value: (f) => f.id },
    { header: 'PURPOSE', value: (f) => f.purpose },
    { header: 'BYTES', value: (f) => f.bytes },
    { header: 'CREATED', value: (f) => new Date(f.created_at * 1000).toISOString() },
    { header: 'FILENAME', value: (f) => f.filename },
  ]);

export function filesCommand(io: CliIo): Command {
  const files = new Command('files').description('Files of the workspace (batch inputs and outputs)');

  files
    .command('upload <path>')
    .description('Upload a file')
    .option('--purpose <purpose>', 'batch, vision, fine-tune, …', 'batch')
    .action(async (path: string, options: { purpose: string }, command) => {
      const ctx = commandContext(command, io);
      const file = await uploadFile(ctx.api, path, options.purpose);
      ctx.print(file, () => fileTable([file]));
    });

  files
    .command('list')
    .description('List files, newest first')
    .option('--purpose <purpose>', 'only this purpose')
    .option('--limit <n>', 'how many', parseInteger)
    .action(async (options: { purpose?: string; limit?: number }, command) => {
      const ctx = commandContext(command, io);
      const query = new URLSearchParams();
      if (options.purpose) query.set('purpose', options.purpose);
      if (options.limit !== undefined) query.set('limit', String(options.limit));
      const page = await ctx.api.request<{ data: FileObject[] }>('GET', `/files?${query}`);
      ctx.print(page, () => fileTable(page.data));
    });

  files
    .command('get <id>')
    .description('Show a file')
    .action(async (id: string, _options, command) => {
      const ctx = commandContext(command, io);
      const file = await ctx.api.request<FileObject>('GET', `/files/${encodeURIComponent(id)}`);
      ctx.print(file, () => fileTable([file]));
    });

  files
    .command('download <id>')
    .description("Write a file's contents to --output, or to stdout")
    .option('--output <path>', 'where to write it')
    .action(async (id: string, options: { output?: string }, command) => {
      const ctx = commandContext(command, io);
      await downloadFile(ctx.api, io, id, options.output);
    });

  files
    .command('delete <id>')
    .description('Delete a file')
    .action(async (id: string, _options, command) => {
      const ctx = commandContext(command, io);
      const result = await ctx.api.request('DELETE', `/files/${encodeURIComponent(id)}`);
      ctx.print(result, () => `Deleted ${id}\n`);
    });

  return files;
}
