/**
 * A model call's `model` as it goes into Vertex AI's URL. A model may be written as Vertex's resource name,
 * which names a project (`projects/{project}/locations/{location}/publishers/google/models/{id}`, an
 * endpoint's `projects/{project}/locations/{location}/endpoints/{id}`), but the call is made in the
 * target's project, a stored credential's own (credential-host.ts movedProject): a model naming another is
 * refused rather than sent, whether its name is one the adapter reads (and would send to the target's
 * project, not the one asked for) or not (and would go into the URL as written). What goes into the URL is
 * a model id, one segment: an id with a separator or a `.` / `..` segment in it is no model of Vertex's and
 * is refused too, so that nothing a client writes there is read as a path.
 */
import { GatewayError } from '../../core/errors.js';
import type { ProviderTarget } from '../types.js';
import {
  decodedSegments,
  otherProject,
  otherProjectRefused,
  projectsNamed,
  targetProject,
} from './vertex-ai-project-names.js';
import { vertexModelId } from './vertex-ai-urls.js';

/** The id of `model` to put in the target's URL; throws for a model naming another project, or no id. */
export function vertexModelIdFor(target: ProviderTarget, model: string): string {
  const own = targetProject(target);
  const other = otherProject(projectsNamed(model), own);
  if (other !== undefined) {
    throw otherProjectRefused('model', other, own, {
      param: 'model',
      why: "a vertex-ai model call is made in its target's project",
      remedy:
        'Name the model by its id (gemini-2.5-flash, claude-sonnet-4@20250514) or as publishers/{publisher}/models/{id}',
    });
  }
  const id = vertexModelId(model);
  const segments = decodedSegments(id);
  if (segments.length > 1 || /^\.{1,2}$/.test(segments[0])) {
    throw new GatewayError(
      'invalid_body',
      `model '${model}' is not a vertex-ai model: name it by its id (gemini-2.5-flash, claude-sonnet-4@20250514), ` +
        'as models/{id}, or as publishers/{publisher}/models/{id}',
      { param: 'model' },
    );
  }
  return id;
}
