/**
 * A Vertex AI project set beside a stored credential is refused in the words of Vertex AI's other refusals
 * of another project (a path's, a body's, a model's): the project asked for, why, the one allowed.
 */
import { describe, expect, it } from 'vitest';
import { movedProjectMessage } from '../../../src/gateway/credential-host.js';

describe('the refusal of a project set beside a stored credential', () => {
  it('names the project, the credential and the project it is used in', () => {
    expect(movedProjectMessage('virtual key "vx"', { asked: 'other', own: 'mine' })).toBe(
      'The config names project "other": the virtual key "vx" may not be used there, as it is used in ' +
        'project "mine" only. Leave cloudb_project_id out, or call with your own credentials to reach ' +
        'another project',
    );
  });

  it('says so when the credential names no project', () => {
    expect(movedProjectMessage('stored vertex-ai credential', { asked: 'other', own: undefined })).toBe(
      'The config names project "other": the stored vertex-ai credential may not be used there, as it ' +
        'names no project (set cloudb_project_id on it). Leave cloudb_project_id out, or call with your ' +
        'own credentials to reach another project',
    );
  });
});
