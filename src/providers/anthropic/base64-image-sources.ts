/**
 * Claude on Bedrock and on Vertex AI takes an image's source as base64 data only (Anthropic's own API also
 * takes a `url` and a Files API `file`). An image of another source type is refused before the call, naming
 * it, rather than sent for the cloud's validation error: in the message's content, or in a tool result's.
 */
import { GatewayError } from '../../core/errors.js';
import type { MessagesRequest } from '../../core/schemas/index.js';

type Block = Record<string, unknown>;

function refuseSource(block: Block, param: string, provider: string): void {
  if (block.type !== 'image') return;
  const type = (block.source as Block | undefined)?.type;
  if (type === 'base64') return;
  throw new GatewayError(
    'unsupported_parameter',
    `${param}.source: Claude on ${provider} takes images as base64 data only (a source of type base64), not of type ${String(type)}`,
    { param: `${param}.source` },
  );
}

export function refuseNonBase64Images(body: MessagesRequest, provider: string): void {
  body.messages.forEach((message, i) => {
    if (!Array.isArray(message.content)) return;
    (message.content as Block[]).forEach((block, j) => {
      const param = `messages[${i}].content[${j}]`;
      refuseSource(block, param, provider);
      if (block.type === 'tool_result' && Array.isArray(block.content)) {
        (block.content as Block[]).forEach((inner, k) => {
          refuseSource(inner, `${param}.content[${k}]`, provider);
        });
      }
    });
  });
}
