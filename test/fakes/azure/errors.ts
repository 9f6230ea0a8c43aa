// Azure's own error bodies, as its APIs send them.

export interface AzureErrorBody {
  error: {
    code: string;
    message: string;
    param?: string | null;
    /** Azure's ErrorResponse (its authoring APIs: Files, fine-tuning, Batch): where the error happened. */
    target?: string;
    type?: string | null;
    status?: number;
    innererror?: unknown;
  };
}

export const azureErrors = {
  unauthorized: (): AzureErrorBody => ({
    error: {
      code: '401',
      message:
        'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
    },
  }),
  resourceNotFound: (): AzureErrorBody => ({ error: { code: '404', message: 'Resource not found' } }),
  deploymentNotFound: (): AzureErrorBody => ({
    error: {
      code: 'DeploymentNotFound',
      message:
        'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
    },
  }),
  rateLimited: (seconds = 6): AzureErrorBody => ({
    error: {
      code: '429',
      message: `Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after ${seconds} seconds. Please go here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate limit.`,
    },
  }),
  contentFilter: (): AzureErrorBody => ({
    error: {
      message:
        "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
      type: null,
      param: 'prompt',
      code: 'content_filter',
      status: 400,
      innererror: {
        code: 'ResponsibleAIPolicyViolation',
        content_filter_result: {
          hate: { filtered: false, severity: 'safe' },
          jailbreak: { filtered: false, detected: false },
          self_harm: { filtered: false, severity: 'safe' },
          sexual: { filtered: false, severity: 'safe' },
          violence: { filtered: true, severity: 'high' },
        },
      },
    },
  }),
  /** The ErrorResponse of Azure's fine-tuning API (Microsoft REST guidelines: `target`, no `param`). */
  invalidPayload: (target: string): AzureErrorBody => ({
    error: { code: 'invalidPayload', message: 'The training file is not valid JSONL.', target },
  }),
  serverError: (): AzureErrorBody => ({
    error: {
      code: '500',
      message: 'The server had an error while processing your request. Sorry about that!',
    },
  }),
};
