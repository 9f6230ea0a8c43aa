/**
 * The services hook checks reach the outside through (hooks/check-types.ts `CheckServices`): a webhook
 * POST, a JSON GET (a JWKS), a URL probe and a judge model. Outbound addresses go through an address
 * policy — the literal URL is checked first, and every name is checked again when it resolves, at connect
 * time — so a check cannot be aimed at the gateway's own network or a cloud metadata service. A webhook's
 * URL and a JWKS address are a config author's, judged by the custom-host policy; a probed URL comes from
 * the caller's or the model's text, judged by GATEWAY_URL_CHECK_POLICY (`public` unless the operator opts
 * in), whatever the custom-host policy allows: otherwise any caller of a config with such a check could
 * learn which internal hosts and ports answer. Bodies a webhook gets are signed (webhook-signature.ts). The
 * caller's signal (the check's timeout) bounds every call.
 */
import { lookup } from 'node:dns/promises';
import { Agent } from 'undici';
import type { CheckServices } from '../../hooks/check-types.js';
import { GatewayError } from '../../core/errors.js';
import { UpstreamTooLarge } from '../../core/upstream-limits.js';
import { closeWithin } from '../close-agent.js';
import { addressRefusal, checkCustomHost, guardedLookup, normaliseHost } from '../custom-host.js';
import type { HookRuntime, RouteRun } from '../pipeline-types.js';
import type { Settings } from '../../settings.js';
import { sendOn, type UpstreamBody } from '../upstream.js';
import { SIGNATURE_HEADER, signWebhookBody } from './webhook-signature.js';

/** Asks a judge model for a chat completion through the gateway's own routing (hooks/judge-call.ts). */
export type JudgeRunner = (
  run: RouteRun,
  target: { config?: string; virtual_key?: string },
  messages: Array<{ role: 'system' | 'user'; content: string }>,
  model: string | undefined,
  signal: AbortSignal,
  hookSpanId: string | undefined,
) => Promise<string>;

/** Answers larger than this are cut off: a check wants a verdict (or a key set), not a download. */
const MAX_WEBHOOK_ANSWER_BYTES = 1024 * 1024;

export function createHookRuntime(settings: Settings, judge: JudgeRunner): HookRuntime {
  const policy = settings.customHostPolicy;
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    connect: { lookup: guardedLookup(policy) as never, timeout: 10_000 },
  });
  const probePolicy = settings.urlCheckPolicy;
  const probeAgent = new Agent({
    keepAliveTimeout: 10_000,
    connect: { lookup: guardedLookup(probePolicy) as never, timeout: 10_000 },
  });
  const secret = settings.hooksWebhookSecret;
  // The receiver holds the signing key to verify the signature, and may echo it like any header.
  const sentSecrets: readonly string[] = secret === undefined ? [] : [secret];

  const postJson: CheckServices['postJson'] = async (url, body, headers, signal, field) => {
    checkCustomHost(url, policy, field);
    const text = JSON.stringify(body);
    const sent: Record<string, string> = { ...headers, 'content-type': 'application/json' };
    if (secret !== undefined) sent[SIGNATURE_HEADER] = signWebhookBody(secret, text);
    const response = await sendOn(agent, { method: 'POST', url, headers: sent, body: text }, signal);
    return { status: response.statusCode, body: await readJson(response.body, 'The webhook'), sentSecrets };
  };

  const getJson: CheckServices['getJson'] = async (url, signal, field) => {
    checkCustomHost(url, policy, field);
    const headers = { accept: 'application/json' };
    const response = await sendOn(agent, { method: 'GET', url, headers }, signal);
    return { status: response.statusCode, body: await readJson(response.body, `The ${field} address`) };
  };

  const probeUrl: CheckServices['probeUrl'] = async (url, dnsOnly, signal) => {
    try {
      checkCustomHost(url, probePolicy, 'url');
    } catch {
      return false;
    }
    const target = new URL(url);
    if (dnsOnly) {
      try {
        const addresses = await lookup(normaliseHost(target.hostname), { all: true });
        return (
          addresses.length > 0 && addresses.every((a) => addressRefusal(a.address, probePolicy) === undefined)
        );
      } catch {
        return false;
      }
    }
    try {
      const response = await probeAgent.request({
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'HEAD',
        signal,
      });
      await response.body.dump();
      return response.statusCode < 400;
    } catch {
      return false;
    }
  };

  return {
    servicesFor(run, model) {
      return {
        postJson,
        getJson,
        probeUrl,
        judge: (target, messages, signal, hookSpanId) =>
          judge(run, target, messages, model, signal, hookSpanId),
      };
    },
    close: async (timeoutMs = Infinity) => {
      const stopped = new Error('the gateway stopped while the check was running');
      await Promise.all([
        closeWithin(agent, timeoutMs, stopped),
        closeWithin(probeAgent, timeoutMs, stopped),
      ]);
    },
  };
}

/** The answer as JSON; undefined when it is not JSON. */
async function readJson(body: UpstreamBody, who: string): Promise<unknown> {
  let text: string;
  try {
    text = await body.text(MAX_WEBHOOK_ANSWER_BYTES);
  } catch (err) {
    if (!(err instanceof UpstreamTooLarge)) throw err;
    throw new GatewayError('upstream_invalid_response', `${who} answered with more than 1 MiB`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
