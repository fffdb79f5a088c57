import { Type } from 'typebox';
import { component, Metadata, NullableTimestamp, OneOf, Timestamp, Uuid } from '../runtime/http-schemas.ts';
import { ROLES } from './roles.ts';

export const Username = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]*$',
  description: 'Letters, digits and . _ @ -, starting with a letter or digit; case-insensitive',
});

export const RoleSchema = OneOf(ROLES, { description: 'owner > admin > developer > operator > viewer' });

export const RealmSchema = component(
  'RtRealm',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    status: Type.String(),
    role: Type.Optional(Type.String({ description: "The caller's role" })),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);

export const IdentitySchema = component(
  'RtIdentity',
  Type.Object({
    id: Type.String(),
    username: Type.String(),
    user_type: Type.String({ description: 'user, service or agent' }),
    display_name: Type.Union([Type.String(), Type.Null()]),
    status: Type.String({ description: 'active or disabled' }),
    realm_id: Type.Union([Type.String(), Type.Null()], { description: 'Home realm (agents, services)' }),
    role: Type.Optional(Type.String({ description: 'Role in the caller realm' })),
    member_since: Type.Optional(Timestamp),
    metadata: Metadata,
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);

export const CredentialsSchema = component(
  'RtCredentials',
  Type.Object(
    {
      key_id: Type.String(),
      access_key: Type.String(),
      secret_key: Type.String({ description: 'Shown once; store it in a server-side secret store' }),
      realm_id: Type.Union([Type.String(), Type.Null()]),
      name: Type.String(),
      created_at: Timestamp,
      expires_at: NullableTimestamp,
    },
    { description: 'A new key pair; the secret is stored only as its SHA-256 and never shown again' },
  ),
);

export const KeySchema = component(
  'RtKey',
  Type.Object({
    id: Type.String(),
    access_key: Type.String(),
    name: Type.String(),
    realm_id: Type.Union([Type.String(), Type.Null()]),
    status: Type.String({ description: 'active, expired or revoked' }),
    created_at: Timestamp,
    expires_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
    last_used_at: NullableTimestamp,
  }),
);

const Color = Type.String({ pattern: '^#[0-9A-Fa-f]{6}$' });
const PublicUrl = Type.Union([Type.String({ maxLength: 2048, format: 'uri' }), Type.Null()]);

export const ThemeSchema = Type.Object(
  {
    brand_name: Type.Optional(Type.Union([Type.String({ maxLength: 120 }), Type.Null()])),
    logo_url: Type.Optional(PublicUrl),
    favicon_url: Type.Optional(PublicUrl),
    primary_color: Type.Optional(Color),
    secondary_color: Type.Optional(Color),
    accent_color: Type.Optional(Color),
    background_color: Type.Optional(Color),
    text_color: Type.Optional(Color),
    font_family: Type.Optional(Type.String({ maxLength: 120, pattern: "^[A-Za-z0-9 ,'-]+$" })),
    border_radius_px: Type.Optional(Type.Integer({ minimum: 0, maximum: 48 })),
    mode: Type.Optional(OneOf(['light', 'dark', 'auto'])),
    welcome_message: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  },
  { description: 'Presentation only: colors #RRGGBB, public https logo/favicon URLs, no markup or scripts' },
);

export const IdentityCreateBody = Type.Object({
  username: Username,
  display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  role: Type.Optional(RoleSchema),
  metadata: Type.Optional(Metadata),
  issue_credentials: Type.Optional(
    Type.Boolean({ description: 'Return a first key pair (default: true for services, false for agents)' }),
  ),
});

export const UserUpdateBody = Type.Object({
  display_name: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])),
  metadata: Type.Optional(Metadata),
  status: Type.Optional(OneOf(['active', 'disabled'])),
});

export const MemberBody = Type.Object({
  identity_id: Type.Optional(Uuid()),
  username: Type.Optional(Username),
  role: RoleSchema,
});
