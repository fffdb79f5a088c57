// The engine runtime's API shapes as TypeScript types, derived from the same TypeBox schemas that validate
// requests and serialize responses (and describe them in OpenAPI): the client library is typed from these.
import type { Static } from 'typebox';
import type { engineApiSchemas } from './api-schemas.ts';

type Schemas = typeof engineApiSchemas;

export type ActionType = Schemas['ActionType'][number];
export type Role = Static<Schemas['Role']>;
export type Realm = Static<Schemas['Realm']>;
export type Identity = Static<Schemas['Identity']>;
export type IdentityCreate = Static<Schemas['IdentityCreate']>;
export type UserUpdate = Static<Schemas['UserUpdate']>;
export type Member = Static<Schemas['Member']>;
export type Credentials = Static<Schemas['Credentials']>;
export type Key = Static<Schemas['Key']>;
export type Theme = Static<Schemas['Theme']>;
export type Provider = Static<Schemas['Provider']>;
export type ProviderInput = Static<Schemas['ProviderInput']>;
export type Prompt = Static<Schemas['Prompt']>;
export type PromptInput = Static<Schemas['PromptInput']>;
export type AgentConfig = Static<Schemas['AgentConfig']>;
export type AgentConfigInput = Static<Schemas['AgentConfigInput']>;
export type Session = Static<Schemas['Session']>;
export type ResumeGrant = Static<Schemas['ResumeGrant']>;
export type Message = Static<Schemas['Message']>;
export type Knowledge = Static<Schemas['Knowledge']>;
export type ExecuteRequest = Static<Schemas['ExecuteRequest']>;
export type ChatRequest = Static<Schemas['ChatRequest']>;
export type Action = Static<Schemas['Action']>;
export type RunResult = Static<Schemas['RunResult']>;
export type ErrorBody = Static<Schemas['ErrorBody']>;
