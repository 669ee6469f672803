import type {
  AddClientAuthentication,
  OAuthClientProvider,
  OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { createPrivateKeyJwtAuth } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { ResolvedServer } from '@wave/mcp-config';
import type { StoredAuth } from './token-store';

/*
 * The SDK's `OAuthClientProvider`s of the pool: one interactive sign-in
 * (authorization code + PKCE) and one client_credentials grant. Each writes
 * what the SDK hands it into a `StoredAuth` record that the manager stores.
 */

export function withExpiry(tokens: OAuthTokens, now: number): StoredAuth['tokens'] {
  const out: NonNullable<StoredAuth['tokens']> = { ...tokens };
  if (typeof tokens.expires_in === 'number' && Number.isFinite(tokens.expires_in))
    out.expiresAt = now + tokens.expires_in * 1000;
  return out;
}

/** The pre-registered client from the server's `oauth` config, if any. */
export function configuredClient(server: ResolvedServer): OAuthClientInformationMixed | undefined {
  const o = server.config.oauth;
  if (o?.clientId === undefined) return undefined;
  return o.clientSecret !== undefined
    ? { client_id: o.clientId, client_secret: o.clientSecret }
    : { client_id: o.clientId };
}

/** True for a server configured for the client_credentials grant (no browser). */
export function isMachine(server: ResolvedServer): boolean {
  return server.config.oauth?.grant === 'client_credentials';
}

/** The SDK's view of a client_credentials grant; writes into `record`. */
export class MachineProvider implements OAuthClientProvider {
  readonly addClientAuthentication?: AddClientAuthentication;

  constructor(
    private readonly server: ResolvedServer,
    private readonly record: StoredAuth,
    private readonly clientName: string,
    private readonly now: () => number,
    private readonly challengedScope: string | undefined,
  ) {
    const o = server.config.oauth;
    if (o?.privateKey !== undefined && o.clientId !== undefined) {
      this.addClientAuthentication = createPrivateKeyJwtAuth({
        issuer: o.clientId,
        subject: o.clientId,
        privateKey: o.privateKey,
        alg: o.signingAlgorithm ?? 'RS256',
      });
    }
  }

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    const o = this.server.config.oauth;
    const meta: OAuthClientMetadata = {
      client_name: this.clientName,
      redirect_uris: [],
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: o?.privateKey !== undefined ? 'private_key_jwt' : 'client_secret_basic',
    };
    const scope = o?.scopes?.join(' ') || this.challengedScope;
    if (scope) meta.scope = scope;
    return meta;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return configuredClient(this.server);
  }

  tokens(): undefined {
    return undefined;
  }

  saveTokens(tokens: OAuthTokens): void {
    const t = withExpiry(tokens, this.now());
    if (t) this.record.tokens = t;
  }

  redirectToAuthorization(): void {
    throw new Error('the client_credentials grant has no browser step');
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    return '';
  }

  prepareTokenRequest(scope?: string): URLSearchParams {
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    if (scope) params.set('scope', scope);
    return params;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.record.discovery = { authorizationServerUrl: state.authorizationServerUrl };
  }
}

/** The SDK's view of one interactive sign-in; writes into `record`, which the manager stores. */
export class SignInProvider implements OAuthClientProvider {
  private verifier = '';
  private discovery: OAuthDiscoveryState | undefined;
  readonly clientMetadataUrl?: string;

  constructor(
    private readonly o: {
      server: ResolvedServer;
      record: StoredAuth;
      redirectUrl: string;
      state: string;
      clientName: string;
      clientMetadataUrl: string | undefined;
      now: () => number;
      openUrl: (url: string) => void | Promise<void>;
    },
  ) {
    if (o.clientMetadataUrl !== undefined && o.server.config.oauth?.clientId === undefined)
      this.clientMetadataUrl = o.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.o.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const secret = this.o.server.config.oauth?.clientSecret !== undefined;
    const meta: OAuthClientMetadata = {
      client_name: this.o.clientName,
      redirect_uris: [this.o.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: secret ? 'client_secret_basic' : 'none',
    };
    const scopes = this.o.server.config.oauth?.scopes;
    if (scopes && scopes.length > 0) meta.scope = scopes.join(' ');
    return meta;
  }

  state(): string {
    return this.o.state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const configured = configuredClient(this.o.server);
    if (configured) return configured;
    const stored = this.o.record.client;
    // Registered for another redirect URI (another random port): register again.
    const uris = (stored as { redirect_uris?: unknown } | undefined)?.redirect_uris;
    if (Array.isArray(uris) && !uris.includes(this.o.redirectUrl)) return undefined;
    return stored;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    // A configured client stays in the config; only registrations are stored.
    if (this.o.server.config.oauth?.clientId !== undefined) return;
    this.o.record.client = info;
  }

  tokens(): OAuthTokens | undefined {
    // A sign-in always asks the person: refresh is the pool's own job (under its lock).
    return undefined;
  }

  saveTokens(tokens: OAuthTokens): void {
    const t = withExpiry(tokens, this.o.now());
    if (t) this.o.record.tokens = t;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    await this.o.openUrl(authorizationUrl.toString());
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') delete this.o.record.client;
    if (scope === 'all' || scope === 'tokens') delete this.o.record.tokens;
    if (scope === 'all' || scope === 'discovery') {
      this.discovery = undefined;
      delete this.o.record.discovery;
    }
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
    const d: NonNullable<StoredAuth['discovery']> = { authorizationServerUrl: state.authorizationServerUrl };
    if (state.resourceMetadataUrl !== undefined) d.resourceMetadataUrl = state.resourceMetadataUrl;
    if (state.resourceMetadata !== undefined) d.resourceMetadata = state.resourceMetadata;
    if (state.authorizationServerMetadata !== undefined)
      d.authorizationServerMetadata = state.authorizationServerMetadata;
    this.o.record.discovery = d;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
}
