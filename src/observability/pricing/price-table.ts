/**
 * The price table: list prices per provider and model, shipped as data (`prices.json`) and overridable per
 * deployment by a file of the same shape (GATEWAY_PRICES_FILE). A model is found by its name as the provider
 * reports it: the exact entry, else the longest entry the name starts with followed by a version
 * (`gpt-4o-2024-08-06` → `gpt-4o`, but not `o1-pro` → `o1`), on the provider's own table, then on the tables it shares prices with
 * (`same_as`: Azure OpenAI prices OpenAI's models, Bedrock and Vertex AI Anthropic's).
 */
import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { compileValidator } from '../../core/validator/compile-validator.js';
import shipped from './prices.json' with { type: 'json' };

const Price = Type.Number({ minimum: 0 });

const TokenPrices = {
  /** Dollars per million prompt tokens not counted below. */
  input: Type.Optional(Price),
  /** Prompt tokens read from the provider's prompt cache; `input` when absent. */
  cache_read: Type.Optional(Price),
  /** Prompt tokens written to the provider's prompt cache; `input` when absent. */
  cache_write: Type.Optional(Price),
  /** Prompt tokens written to be kept an hour (Anthropic's 1h TTL); `cache_write` when absent. */
  cache_write_1h: Type.Optional(Price),
  input_audio: Type.Optional(Price),
  input_image: Type.Optional(Price),
  output: Type.Optional(Price),
  /** Reasoning tokens (counted within completion tokens); `output` when absent. */
  reasoning: Type.Optional(Price),
  output_audio: Type.Optional(Price),
};

/** Service tiers a provider bills at other prices: the tier an answer says served it (OpenAI's
 * `service_tier`), or a provider batch's lines (`batch`). */
export const PRICED_TIERS = ['flex', 'priority', 'batch'] as const;
export type PricedTier = (typeof PRICED_TIERS)[number];

const TierPrices = Type.Object(TokenPrices, { additionalProperties: false });

/** Dollars per 1,000 uses of a server-side tool the provider bills apart from tokens. */
const ToolFees = Type.Object(
  {
    web_search: Type.Optional(Price),
    web_fetch: Type.Optional(Price),
    /** A prompt grounded with Google Search (Gemini models that bill per grounded prompt, not per query). */
    grounded_prompt: Type.Optional(Price),
  },
  { additionalProperties: false },
);
export type ToolFeePrices = Static<typeof ToolFees>;

const ModelPriceSchema = Type.Object(
  {
    ...TokenPrices,
    /** The model's own prices on a service tier, laid over its prices above (OpenAI's priority prices). A
     * tier without them takes the provider's discount for it (`flex_discount`, `batch_discount`). */
    service_tiers: Type.Optional(
      Type.Object(
        {
          flex: Type.Optional(TierPrices),
          priority: Type.Optional(TierPrices),
          batch: Type.Optional(TierPrices),
        },
        { additionalProperties: false },
      ),
    ),
    /** Fees per 1,000 uses of server-side tools, over the provider's `tool_fees`. */
    tool_fees: Type.Optional(ToolFees),
    /** Other prices for a prompt above a size (long-context tiers). */
    long_context: Type.Optional(
      Type.Object(
        { above_input_tokens: Type.Integer({ minimum: 0 }), ...TokenPrices },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const ProviderPricesSchema = Type.Object(
  {
    /** Share of the price taken off for a provider batch's lines (0.5: half price). */
    batch_discount: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    /** Share of the price taken off for a call served on the flex tier (`service_tier: "flex"`, OpenAI's),
     * for a model without its own flex prices. */
    flex_discount: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    /** Share of the price added for a call served on the priority tier, for a model without its own priority
     * prices (1: twice the price; Gemini's Priority, 75% to 100% more than standard, at the most). */
    priority_premium: Type.Optional(Type.Number({ minimum: 0 })),
    /** Fees per 1,000 uses of server-side tools (web searches), for all its models. */
    tool_fees: Type.Optional(ToolFees),
    /** Tables looked at, in order, for a model this provider's own table does not have. */
    same_as: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    models: Type.Optional(Type.Record(Type.String({ minLength: 1 }), ModelPriceSchema)),
  },
  { additionalProperties: false },
);

const PriceFileSchema = Type.Object(
  {
    $comment: Type.Optional(Type.String()),
    as_of: Type.Optional(Type.String()),
    providers: Type.Record(Type.String({ minLength: 1 }), ProviderPricesSchema),
  },
  { additionalProperties: false },
);

export type ModelPrice = Static<typeof ModelPriceSchema>;
export type PriceFile = Static<typeof PriceFileSchema>;
type ProviderPrices = Static<typeof ProviderPricesSchema>;

const validatePriceFile = compileValidator(PriceFileSchema, {
  code: 'invalid_config',
  rootPath: 'prices',
  subject: 'The price file',
  rootParam: null,
});

export interface PriceMatch {
  price: ModelPrice;
  /** The share taken off when the call is a line of a provider batch. */
  batchDiscount: number;
  /** The share taken off when the call was served on the flex tier. */
  flexDiscount: number;
  /** The share added when the call was served on the priority tier. */
  priorityPremium: number;
  /** Dollars per 1,000 uses of server-side tools: the answering provider's (the model's own win). */
  toolFees?: ToolFeePrices;
}

export class PriceTable {
  private readonly providers: Map<string, ProviderPrices>;
  /** Lookups by (provider, model): a deployment sees few distinct models, each many times. */
  private readonly found = new Map<string, PriceMatch | null>();

  constructor(file: PriceFile) {
    this.providers = new Map(Object.entries(file.providers));
  }

  /** The prices of a model as `provider` reports it, or undefined when the table does not know it. */
  lookup(provider: string, model: string): PriceMatch | undefined {
    const key = `${provider}\u0000${model}`;
    let match = this.found.get(key);
    if (match === undefined) {
      match = this.search(provider, normaliseModel(model)) ?? null;
      if (this.found.size >= 10_000) this.found.clear();
      this.found.set(key, match);
    }
    return match ?? undefined;
  }

  private search(provider: string, model: string): PriceMatch | undefined {
    const own = this.providers.get(provider);
    if (!own) return undefined;
    const batchDiscount = own.batch_discount ?? 0;
    const flexDiscount = own.flex_discount ?? 0;
    const priorityPremium = own.priority_premium ?? 0;
    for (const table of [provider, ...(own.same_as ?? [])]) {
      const price = bestEntry(this.providers.get(table)?.models, model);
      if (price) return { price, batchDiscount, flexDiscount, priorityPremium, toolFees: own.tool_fees };
    }
    return undefined;
  }
}

/**
 * What may follow a model's name in the name of one of its versions: dates and numbers (`-2024-08-06`,
 * `-20241022`, `-0613`, `-001`), revisions (`-v2`), `-latest`, `-preview`, `-exp`, `-beta`, and Bedrock's
 * `:0` and `:200k`. Another word makes another model, at another price (`o1-pro`, `gpt-4o-realtime-preview`,
 * `grok-4-fast-reasoning`), which its family's entry does not price; so does a single digit right after the
 * name, a minor version (`claude-opus-5-5` is not `claude-opus-5`).
 */
const VERSION_SUFFIX = /^(?!-\d(?:\D|$))(?:-(?:\d+|v\d+(?:\.\d+)?|latest|preview|exp|beta)|:\d+k?)+$/;

/** The exact entry, else the longest that `model` starts with, followed by a version (VERSION_SUFFIX). */
function bestEntry(models: ProviderPrices['models'], model: string): ModelPrice | undefined {
  if (!models) return undefined;
  const exact = models[model];
  if (exact) return exact;
  let best: string | undefined;
  for (const name of Object.keys(models)) {
    if (
      model.length > name.length &&
      model.startsWith(name) &&
      VERSION_SUFFIX.test(model.slice(name.length)) &&
      (best === undefined || name.length > best.length)
    ) {
      best = name;
    }
  }
  return best === undefined ? undefined : models[best];
}

const BEDROCK_REGION = /^(?:us|eu|apac|global|us-gov|jp|au|ca)\./;
const BEDROCK_VENDOR = /^(?:anthropic|amazon|meta|mistral|cohere|ai21|deepseek|openai)\./;

/**
 * The model's name as the table writes it: lower case, without a path (`models/gemini-2.0-flash`,
 * `publishers/google/models/…`), Bedrock's region and vendor prefixes and revision
 * (`us.anthropic.claude-3-5-sonnet-20240620-v1:0` → `claude-3-5-sonnet-20240620-v1`), and with `-` for
 * Vertex's `@` before a version (`claude-3-5-sonnet-v2@20241022`).
 */
export function normaliseModel(model: string): string {
  let name = model.toLowerCase();
  const slash = name.lastIndexOf('/');
  if (slash >= 0) name = name.slice(slash + 1);
  name = name.replace(BEDROCK_REGION, '').replace(BEDROCK_VENDOR, '');
  return name.replace(/:\d+$/, '').replace('@', '-');
}

/**
 * The shipped table with a deployment's file laid over it: a provider named in the file replaces the shipped
 * provider's `batch_discount`, `flex_discount`, `priority_premium`, `tool_fees` and `same_as` when it gives them, and its models are added to or replace the
 * shipped ones by name.
 */
export function loadPriceTable(overrideFile: string | undefined): PriceTable {
  const base = validatePriceFile.assert(shipped);
  if (!overrideFile) return new PriceTable(base);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(overrideFile, 'utf8'));
  } catch (err) {
    throw new Error(`GATEWAY_PRICES_FILE ${overrideFile} cannot be read as JSON: ${(err as Error).message}`);
  }
  return new PriceTable(mergePrices(base, validatePriceFile.assert(parsed)));
}

export function mergePrices(base: PriceFile, override: PriceFile): PriceFile {
  const providers: PriceFile['providers'] = { ...base.providers };
  for (const [name, prices] of Object.entries(override.providers)) {
    const current = providers[name] ?? {};
    providers[name] = {
      ...current,
      ...prices,
      models: { ...current.models, ...prices.models },
    };
  }
  return { as_of: override.as_of ?? base.as_of, providers };
}
