/**
 * A Vertex AI path names the project a call is made in and billed to (`/projects/{project}/locations/…`).
 * A service account may reach projects other than the one its stored credential is for, and a caller who
 * may use the credential is given that one project only: with a stored credential, every project the
 * pass-through path names must be the credential's own (`cloudb_project_id`, else the service account's own
 * `project_id`). The target's project is the credential's: a config may not set another beside a virtual
 * key or catalog provider (credential-host.ts movedProject, refused as the target is resolved), and a
 * stored config holding the service account is the credential. The caller's own credentials go to any
 * project they reach. The body is held to the same project (vertex-ai-body-projects.ts), and a model
 * call's `model` to the target's (vertex-ai-model-project.ts).
 */
import { GatewayError } from '../../core/errors.js';
import type { PassthroughCall } from '../types.js';
import {
  decodedSegments,
  otherProject,
  otherProjectRefused,
  projectsNamed,
  targetProject,
} from './vertex-ai-project-names.js';

export function refuseOtherProject(call: PassthroughCall): void {
  if (!call.storedCredential) return;
  const named = projectsNamed(call.path);
  const own = targetProject(call.target);
  const other = otherProject(named, own);
  if (other === undefined) {
    refuseHiddenSegments(call.path);
    return;
  }
  throw otherProjectRefused('The path', other, own);
}

/**
 * A path whose separators are written encoded (`%2F`, `%5C`) or whose decoded form has `.` or `..`
 * segments: the project it names is not what it looks like (`/projects/own%2F..%2Fother/…` reaches
 * `other` when Vertex, or a proxy on the way, decodes and resolves it), so it is refused as a whole rather
 * than read one way here and another there.
 */
function refuseHiddenSegments(path: string): void {
  const pathname = path.split(/[?#]/, 1)[0];
  const encodedSeparator = /%(?:2f|5c)/i.test(pathname);
  if (!encodedSeparator && !decodedSegments(pathname).some((segment) => /^\.{1,2}$/.test(segment))) return;
  throw new GatewayError(
    'invalid_path',
    `The path ${pathname} ${encodedSeparator ? 'has an encoded / or \\ (%2F, %5C)' : "has a '.' or '..' segment once decoded"}: ` +
      'with a stored vertex-ai credential a pass-through path must name the resource itself, with plain separators',
    { param: 'path' },
  );
}
