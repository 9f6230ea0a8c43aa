/**
 * Anthropic Messages natively on Bedrock, for Claude models: InvokeModel / InvokeModelWithResponseStream
 * with Anthropic's own body (`anthropic_version: bedrock-2023-05-31`; the model in the URL; beta flags in
 * `anthropic_beta`). Converse is not used here: it has its own event grammar, and the client is owed
 * Anthropic's exactly. The stream is an AWS event-stream whose `chunk` events carry each Anthropic event's
 * JSON, base64-encoded; that text is relayed as it is.
 */
import {
  MessagesEventRelay,
  messagesAnswerUsage,
  refuseNonBase64Images,
  withAutomaticCacheBreakpoint,
} from '../anthropic/index.js';
import type { OperationHandler, StreamOutput, StreamTranslator, UpstreamEvent } from '../types.js';
import { joinUrl } from '../shared/url.js';
import { bedrockEventFailure } from './bedrock-error.js';
import { signBedrockRequest } from './bedrock-sign.js';
import { bedrockBaseUrl, bedrockCredentials } from './bedrock-target.js';

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** Claude on Bedrock: `anthropic.claude-…`, or a cross-region inference profile such as
 * `us.anthropic.claude-…`, or an ARN naming one. */
export function isBedrockClaudeModel(model: string): boolean {
  return /(^|[./])anthropic\.claude/.test(model);
}

function betaFlags(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const flags = (Array.isArray(value) ? value.join(',') : value)
    .split(',')
    .map((flag) => flag.trim())
    .filter((flag) => flag !== '');
  return flags.length > 0 ? flags : undefined;
}

class BedrockMessagesRelay implements StreamTranslator {
  private readonly relay = new MessagesEventRelay('bedrock');

  push(event: UpstreamEvent): StreamOutput[] {
    if (event.kind !== 'message') return [{ type: 'malformed', detail: 'not an event-stream message' }];
    const failure = bedrockEventFailure('bedrock', event);
    if (failure !== undefined) return [{ type: 'error', error: failure }];
    const bytes = (event.payload as { bytes?: unknown } | null)?.bytes;
    if (event.headers[':event-type'] !== 'chunk' || typeof bytes !== 'string') {
      return [{ type: 'malformed', detail: `unexpected event ${event.headers[':event-type'] ?? '?'}` }];
    }
    return this.relay.relay(Buffer.from(bytes, 'base64').toString('utf8'));
  }

  end = () => this.relay.end();
  usage = () => this.relay.usage();
  serviceTier = () => this.relay.serviceTier();
  finished = () => this.relay.finished();
}

export const bedrockMessagesOperation: OperationHandler<'messages'> = {
  accepts: (body) => isBedrockClaudeModel(body.model),

  buildRequest(req) {
    refuseNonBase64Images(req.body, 'bedrock');
    const credentials = bedrockCredentials(req.target);
    // Bedrock refuses a request-level cache_control: the breakpoint goes where Anthropic would put it.
    const { model, stream: _stream, ...rest } = withAutomaticCacheBreakpoint(req.body);
    const anthropicBeta = betaFlags(req.clientHeaders['anthropic-beta']);
    const body = {
      anthropic_version: BEDROCK_ANTHROPIC_VERSION,
      ...(anthropicBeta ? { anthropic_beta: anthropicBeta } : {}),
      ...rest,
    };
    const action = req.stream ? 'invoke-with-response-stream' : 'invoke';
    return signBedrockRequest(
      {
        method: 'POST',
        url: joinUrl(
          bedrockBaseUrl(req.target, credentials.region),
          `/model/${encodeURIComponent(model)}/${action}`,
        ),
        headers: {
          ...req.forwardHeaders,
          'content-type': 'application/json',
          accept: req.stream ? 'application/vnd.amazon.eventstream' : 'application/json',
        },
        body: JSON.stringify(body),
      },
      credentials,
    );
  },
  parseResponse: (_req, res) => res.body,
  usageOf: messagesAnswerUsage,
  createStreamTranslator: () => new BedrockMessagesRelay(),
};
