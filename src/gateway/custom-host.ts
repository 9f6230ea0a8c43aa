/**
 * Which addresses the gateway may call. Self-hosted deployments reach local servers (vLLM, Ollama) by
 * default; a shared deployment sets GATEWAY_CUSTOM_HOST_POLICY=public so clients cannot aim the gateway at
 * its own network. Cloud metadata and link-local addresses are refused under every policy; an IPv6 address
 * that carries an IPv4 one (NAT64, 6to4, mapped) is judged by that one as well. Literal IPs are
 * checked here; names are checked when they are resolved, at connect time (see `guardedLookup`), so a DNS
 * answer cannot slip past the check.
 */
import { BlockList, isIP } from 'node:net';
import { LRUCache } from 'lru-cache';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { GatewayError } from '../core/errors.js';

export type CustomHostPolicy = 'private' | 'public';

const alwaysRefused = new BlockList();
alwaysRefused.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, incl. 169.254.169.254 and ECS 169.254.170.2
alwaysRefused.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
alwaysRefused.addSubnet('fe80::', 10, 'ipv6'); // link-local
alwaysRefused.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6

const nonPublic = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(net, bits, 'ipv4');
}
nonPublic.addAddress('::', 'ipv6');
nonPublic.addAddress('::1', 'ipv6');
nonPublic.addSubnet('fc00::', 7, 'ipv6');
nonPublic.addSubnet('fec0::', 10, 'ipv6'); // site-local (deprecated, RFC 3879)
nonPublic.addSubnet('64:ff9b:1::', 48, 'ipv6'); // local-use IPv4/IPv6 translation (RFC 8215)
nonPublic.addSubnet('ff00::', 8, 'ipv6');

const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata',
  'instance-data',
  'metadata.azure.com',
]);

function family(address: string): 'ipv4' | 'ipv6' | undefined {
  const version = isIP(address);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : undefined;
}

/**
 * IPv6 prefixes whose addresses carry an IPv4 address, and where: IPv4-mapped (::ffff:0:0/96) and
 * IPv4-compatible (::/96, deprecated) and NAT64 (64:ff9b::/96, RFC 6052; the local-use 64:ff9b:1::/48 of
 * RFC 8215 at its /96 position) in the last 32 bits, 6to4 (2002::/16, RFC 3056) in the 32 after the
 * prefix. A gateway with a NAT64 or 6to4 route reaches the IPv4 address, so that is the one judged.
 */
const ipv4Carriers: readonly { net: BlockList; hextet: number }[] = [
  { net: subnet('::ffff:0:0', 96), hextet: 6 },
  { net: subnet('::', 96), hextet: 6 },
  { net: subnet('64:ff9b::', 96), hextet: 6 },
  { net: subnet('64:ff9b:1::', 48), hextet: 6 },
  { net: subnet('2002::', 16), hextet: 1 },
];

function subnet(net: string, bits: number): BlockList {
  const list = new BlockList();
  list.addSubnet(net, bits, 'ipv6');
  return list;
}

/** The IPv4 address an IPv6 address carries (see `ipv4Carriers`), undefined when it carries none, null when
 * it is a carrier whose address cannot be read (refused). A zone id (`%eth0`) is no part of the address. */
function carriedIPv4(address: string): string | null | undefined {
  const carrier = ipv4Carriers.find(({ net }) => net.check(address, 'ipv6'));
  if (!carrier) return undefined;
  const hextets = expandIPv6(address.split('%', 1)[0] ?? '');
  if (!hextets) return null;
  const high = hextets[carrier.hextet] ?? 0;
  const low = hextets[carrier.hextet + 1] ?? 0;
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The eight 16-bit groups of an IPv6 address, in any notation WHATWG URL parsing takes (it rewrites a
 * dotted IPv4 tail as hex and lower-cases; its `::` is expanded here); undefined for one it does not take.
 * Never throws: it runs in the connect-time DNS callback, where a throw would not be caught. */
function expandIPv6(address: string): number[] | undefined {
  if (!URL.canParse(`http://[${address}]`)) return undefined;
  const canonical = new URL(`http://[${address}]`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::');
  const groups = (part: string) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * A host as the rules compare it: lower case, without IPv6 brackets, without the one trailing dot of a
 * fully qualified name. `METADATA.GOOGLE.INTERNAL.` names the same host as `metadata.google.internal`, and
 * `169.254.169.254.` the same address as `169.254.169.254`.
 */
export function normaliseHost(host: string): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const lower = bare.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** Why an address may not be called under the policy, or undefined when it may. An IPv6 address that
 * carries an IPv4 address is judged by both. */
export function addressRefusal(rawAddress: string, policy: CustomHostPolicy): string | undefined {
  const address = normaliseHost(rawAddress);
  const kind = family(address);
  if (!kind) return undefined;
  const refusal = refusalOf(address, kind, policy);
  if (refusal) return `${address} is ${refusal}`;
  const carried = kind === 'ipv6' ? carriedIPv4(address) : undefined;
  if (carried === null) return `${address} carries an IPv4 address that cannot be read`;
  const carriedRefusal = carried === undefined ? undefined : refusalOf(carried, 'ipv4', policy);
  return carriedRefusal && `${address} carries ${carried}, which is ${carriedRefusal}`;
}

function refusalOf(address: string, kind: 'ipv4' | 'ipv6', policy: CustomHostPolicy): string | undefined {
  if (alwaysRefused.check(address, kind)) return 'a link-local or cloud metadata address';
  if (policy === 'public' && nonPublic.check(address, kind)) return 'not a public address';
  return undefined;
}

/** Values already accepted, per policy: the check is a pure function of the two, and runs per request. */
const accepted = {
  private: new LRUCache<string, true>({ max: 1000 }),
  public: new LRUCache<string, true>({ max: 1000 }),
};

/** Whether a custom_host value was checked and accepted under the policy already, so that a caller whose
 * `param` has to be built can skip building it (checkCustomHost would return at once). */
export function customHostAccepted(value: string, policy: CustomHostPolicy): boolean {
  return accepted[policy].has(value);
}

/** Checks a custom_host value before any request is made; throws a 400 naming `param`. */
export function checkCustomHost(value: string, policy: CustomHostPolicy, param = 'custom_host'): void {
  if (customHostAccepted(value, policy)) return;
  refuseCustomHost(value, policy, param);
  accepted[policy].set(value, true);
}

function refuseCustomHost(value: string, policy: CustomHostPolicy, param: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new GatewayError('custom_host_refused', `${param} is not a valid URL`, { param });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new GatewayError('custom_host_refused', `${param} must use http or https`, { param });
  }
  if (url.username || url.password) {
    throw new GatewayError('custom_host_refused', `${param} must not carry credentials`, { param });
  }
  const host = normaliseHost(url.hostname);
  if (METADATA_NAMES.has(host)) {
    throw new GatewayError('custom_host_refused', `${param} points at a cloud metadata service`, { param });
  }
  if (policy === 'public' && (host === 'localhost' || host.endsWith('.localhost'))) {
    throw new GatewayError('custom_host_refused', `${param} must be a public address`, { param });
  }
  const refusal = addressRefusal(host, policy);
  if (refusal) throw new GatewayError('custom_host_refused', `${param} refused: ${refusal}`, { param });
}

/** The error code of a connection the policy refused after name resolution. */
export const POLICY_REFUSAL_CODE = 'EADDRREFUSEDBYPOLICY';

/** The address policy refused the resolved address (see `guardedLookup`), whatever wraps its error. */
export function refusedByPolicy(err: unknown): boolean {
  for (let cause = err; cause instanceof Error; cause = cause.cause) {
    if ((cause as NodeJS.ErrnoException).code === POLICY_REFUSAL_CODE) return true;
  }
  return false;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** dns.lookup asked for every address (`all: true`); a test gives its own answers. */
export type ResolveAll = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** A dns.lookup for outgoing connections that refuses addresses the policy forbids. */
export function guardedLookup(policy: CustomHostPolicy, resolveAll: ResolveAll = dnsLookup) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolveAll(hostname, { ...options, all: true }, (err, list) => {
      if (err) return callback(err, []);
      for (const entry of list) {
        const refusal = addressRefusal(entry.address, policy);
        if (refusal) {
          const error: NodeJS.ErrnoException = new Error(`Refused to connect to ${hostname}: ${refusal}`);
          error.code = POLICY_REFUSAL_CODE;
          return callback(error, []);
        }
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first)
        return callback(Object.assign(new Error(`No address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
