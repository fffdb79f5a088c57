import type { OperationExamples } from '@keel/core';

/**
 * Ids the examples use for resources a caller creates first (the replay test maps them to the ids it created).
 * Guard's ids are positive integers.
 */
export const EXAMPLE_IDS = { pattern: '41', allowlistItem: '7', blacklistItem: '3', validator: '12' } as const;

/**
 * One realistic request per operation, shown by `/docs` ("Try it out" sends it as is) and replayed against a
 * running guard by test/openapi-examples.test.ts. An operation added without an entry fails that test.
 */
export const GUARD_EXAMPLES: OperationExamples = {
  'POST /detect': {
    body: {
      text: 'Hi, this is Jane Doe about order 4821. Please reply to jane.doe@example.org or call +1 415 555 0132.',
      rid: 'support-ticket-4821',
      guardrails: ['no_secrets', 'no_prompt_injection'],
    },
  },
  'POST /patterns': {
    body: {
      Name: 'EMPLOYEE_ID',
      Regex: '\\bEMP-\\d{6}\\b',
      Description: 'Acme employee numbers: EMP- and six digits',
      Category: 'PII',
      IsActive: true,
      BlockThreshold: null,
      AllowThreshold: null,
    },
  },
  'DELETE /patterns/{id}': { params: { id: EXAMPLE_IDS.pattern } },
  'POST /allowlist': { body: { value: 'support@acme-outdoor.com', description: 'Our public support address' } },
  'DELETE /allowlist/{id}': { params: { id: EXAMPLE_IDS.allowlistItem } },
  'POST /blacklist': { body: { value: 'Project Bluefin', description: 'Code name of an unannounced product' } },
  'DELETE /blacklist/{id}': { params: { id: EXAMPLE_IDS.blacklistItem } },
  'POST /validators': {
    body: {
      name: 'order_reply_json',
      type: 'SCHEMA',
      rule: '{"type":"object","required":["orderId","status"],"properties":{"orderId":{"type":"string"},"status":{"enum":["shipped","pending","cancelled"]}}}',
      description: 'Model answers about an order must be JSON with its id and status',
    },
  },
  'DELETE /validators/{id}': { params: { id: EXAMPLE_IDS.validator } },
  'POST /templates/import': {
    body: {
      template: {
        name: 'Acme HR data',
        description: 'Badge numbers and ticket ids used by the HR team',
        patterns: [
          { Name: 'ACME_BADGE', Regex: '\\bBADGE-\\d{5}\\b', Description: 'Office badge number', Category: 'PII' },
        ],
        validators: [
          { name: 'hr_ticket_id', type: 'REGEX', rule: '^HR-\\d{6}$', description: 'An HR ticket id and nothing else' },
        ],
      },
    },
  },
  'POST /v1/chat/completions': {
    body: {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are the support assistant of Acme Outdoor. Answer in two sentences.' },
        { role: 'user', content: 'Where is my order 4821? You can reach me at jane.doe@example.org.' },
      ],
    },
  },
};
