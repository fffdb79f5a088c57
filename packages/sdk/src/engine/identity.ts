import type { EngineApi } from '@keel/engine';
import { type EngineCaller, seg } from './engine-caller.ts';
import type { Page, PageQuery, ThemeView, WhoAmI } from './engine-types.ts';

/** Identity, keys, users, realms, members and realm themes (`engine.identity`). */
export class EngineIdentity {
  readonly #engine: EngineCaller;
  constructor(engine: EngineCaller) {
    this.#engine = engine;
  }

  /** POST /api/v1/auth/register (when the engine allows registration); no token needed. */
  register(input: { username: string; user_type?: 'user' | 'service'; realm_name?: string }) {
    return this.#engine.call<{
      user: EngineApi.Identity;
      realm: EngineApi.Realm | null;
      credentials: EngineApi.Credentials;
    }>({ method: 'POST', path: '/api/v1/auth/register', body: input, idempotent: false, anonymous: true });
  }

  /** Who the current token belongs to. */
  whoAmI() {
    return this.#engine.call<WhoAmI>({ method: 'GET', path: '/api/v1/auth/is-authenticated', idempotent: true });
  }

  createKeys(input: { name?: string; realm_id?: string; expires_at?: string } = {}) {
    return this.#engine.call<EngineApi.Credentials>({
      method: 'POST',
      path: '/api/v1/auth/keys',
      body: input,
      idempotent: false,
    });
  }

  listKeys() {
    return this.#engine.call<{ data: EngineApi.Key[] }>({ method: 'GET', path: '/api/v1/auth/keys', idempotent: true });
  }

  revokeKey(keyId: string) {
    return this.#engine.call<EngineApi.Key>({
      method: 'DELETE',
      path: `/api/v1/auth/keys/${seg(keyId)}`,
      idempotent: true,
    });
  }

  getUser(id: string) {
    return this.#engine.call<EngineApi.Identity>({ method: 'GET', path: `/api/v1/users/${seg(id)}`, idempotent: true });
  }

  updateUser(id: string, input: EngineApi.UserUpdate) {
    return this.#engine.call<EngineApi.Identity>({
      method: 'PATCH',
      path: `/api/v1/users/${seg(id)}`,
      body: input,
      idempotent: true,
    });
  }

  replaceUser(id: string, input: EngineApi.UserUpdate) {
    return this.#engine.call<EngineApi.Identity>({
      method: 'PUT',
      path: `/api/v1/users/${seg(id)}`,
      body: input,
      idempotent: true,
    });
  }

  deleteUser(id: string) {
    return this.#engine.call<void>({ method: 'DELETE', path: `/api/v1/users/${seg(id)}`, idempotent: true });
  }

  createRealm(input: { name: string }) {
    return this.#engine.call<EngineApi.Realm>({
      method: 'POST',
      path: '/api/v1/realms',
      body: input,
      idempotent: false,
    });
  }

  listMembers(realmId: string, query: PageQuery = {}) {
    return this.#engine.call<Page<EngineApi.Identity>>({
      method: 'GET',
      path: `/api/v1/realms/${seg(realmId)}/members`,
      query: { ...query },
      idempotent: true,
    });
  }

  addMember(realmId: string, input: EngineApi.Member) {
    return this.#engine.call<EngineApi.Identity>({
      method: 'POST',
      path: `/api/v1/realms/${seg(realmId)}/members`,
      body: input,
      idempotent: true,
    });
  }

  createAgentIdentity(realmId: string, input: EngineApi.IdentityCreate) {
    return this.#createIdentity(`/api/v1/realms/${seg(realmId)}/agents`, input);
  }

  createServiceIdentity(realmId: string, input: EngineApi.IdentityCreate) {
    return this.#createIdentity(`/api/v1/realms/${seg(realmId)}/identities/services`, input);
  }

  #createIdentity(path: string, input: EngineApi.IdentityCreate) {
    return this.#engine.call<{ identity: EngineApi.Identity; credentials: EngineApi.Credentials | null }>({
      method: 'POST',
      path,
      body: input,
      idempotent: false,
    });
  }

  getTheme(realmId: string) {
    return this.#engine.call<ThemeView>({
      method: 'GET',
      path: `/api/v1/realms/${seg(realmId)}/theme`,
      idempotent: true,
    });
  }

  putTheme(realmId: string, theme: EngineApi.Theme) {
    return this.#engine.call<ThemeView>({
      method: 'PUT',
      path: `/api/v1/realms/${seg(realmId)}/theme`,
      body: theme,
      idempotent: true,
    });
  }
}
