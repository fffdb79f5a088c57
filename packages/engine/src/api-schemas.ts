// The schemas of the engine's public API shapes, by name: the SDK's types are generated from these (and
// `api-types.ts` derives the same names as TypeScript types), so the client and the service cannot disagree.
import { AgentConfigSchema, ConfigBody } from './agents/agent-routes.ts';
import { ErrorBodySchema } from './http/schemas.ts';
import {
  CredentialsSchema,
  IdentityCreateBody,
  IdentitySchema,
  KeySchema,
  MemberBody,
  RealmSchema,
  RoleSchema,
  ThemeSchema,
  UserUpdateBody,
} from './identity/identity-schemas.ts';
import { KnowledgeSchema } from './knowledge/knowledge-routes.ts';
import { PromptBodySchema, PromptSchema } from './prompts/prompt-routes.ts';
import { ProviderBodySchema, ProviderSchema } from './providers/provider-routes.ts';
import { ACTION_TYPES } from './runtime/actions.ts';
import { ActionSchema, ChatBody, ExecuteBody, RunResultSchema } from './runtime/runtime-routes.ts';
import { MessageSchema, SessionSchema, TokenGrant } from './sessions/session-routes.ts';

/** Every named API shape of the engine runtime: a TypeBox schema, or a list of allowed strings. */
export const engineApiSchemas = {
  ActionType: ACTION_TYPES,
  Role: RoleSchema,
  Realm: RealmSchema,
  Identity: IdentitySchema,
  IdentityCreate: IdentityCreateBody,
  UserUpdate: UserUpdateBody,
  Member: MemberBody,
  Credentials: CredentialsSchema,
  Key: KeySchema,
  Theme: ThemeSchema,
  Provider: ProviderSchema,
  ProviderInput: ProviderBodySchema,
  Prompt: PromptSchema,
  PromptInput: PromptBodySchema,
  AgentConfig: AgentConfigSchema,
  AgentConfigInput: ConfigBody,
  Session: SessionSchema,
  ResumeGrant: TokenGrant,
  Message: MessageSchema,
  Knowledge: KnowledgeSchema,
  ExecuteRequest: ExecuteBody,
  ChatRequest: ChatBody,
  Action: ActionSchema,
  RunResult: RunResultSchema,
  ErrorBody: ErrorBodySchema,
} as const;
