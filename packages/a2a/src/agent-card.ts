/**
 * The A2A 1.0 AgentCard: built from the native card (and the authenticator's scheme) for
 * `/.well-known/agent-card.json`, and read back into a native card on the client side.
 */
import type { AgentCard, AgentSkill, JsonObject, SecuritySchemeDict } from '@agent/core';
import { isRecord } from '@agent/core/internal';
import {
  type A2ASecurityRequirement,
  type A2ASecurityScheme,
  type Authenticator,
  type SecuritySchemeSource,
  toA2ASecuritySchemes,
} from '@agent/auth';
import { A2A_PROTOCOL_VERSION } from './protojson.js';

/** Where an A2A agent serves its public card, below its base URL. */
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

export type A2AProtocolBinding = 'JSONRPC' | 'HTTP+JSON' | 'GRPC' | (string & {});

export interface A2AAgentInterface {
  url: string;
  protocolBinding: A2AProtocolBinding;
  protocolVersion: string;
  tenant?: string;
}

export interface A2AAgentSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
}

export interface A2AAgentCard {
  name: string;
  description: string;
  version: string;
  supportedInterfaces: A2AAgentInterface[];
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  iconUrl?: string;
  capabilities: { streaming?: boolean; pushNotifications?: boolean; extendedAgentCard?: boolean };
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: A2AAgentSkill[];
  securitySchemes?: Record<string, A2ASecurityScheme>;
  securityRequirements?: A2ASecurityRequirement[];
}

/** Card fields the native card has no place for. */
export interface A2ACardFields {
  /** Default: the native card's version, else '1.0.0'. */
  version?: string;
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  iconUrl?: string;
  /** Default ['text/plain', 'application/json']. */
  defaultInputModes?: string[];
  /** Default ['text/plain', 'application/json']. */
  defaultOutputModes?: string[];
}

export interface ToA2AAgentCardOptions {
  /** The absolute URL of the JSON-RPC binding (listed first: the preferred interface). */
  jsonRpcUrl: string;
  /** The absolute URL of the HTTP+JSON binding. */
  restUrl: string;
  /** The interface tenant clients echo; none when absent. */
  tenant?: string;
  pushNotifications: boolean;
  extendedAgentCard: boolean;
  fields?: A2ACardFields;
  /** Its scheme is advertised when the native card names none. */
  authenticator?: Authenticator;
}

const DEFAULT_MODES = ['text/plain', 'application/json'];

function toA2ASkill(skill: AgentSkill): A2AAgentSkill {
  // A2A requires description and tags on every skill.
  return {
    id: skill.id,
    name: skill.name,
    description: skill.description || skill.name,
    tags: Array.isArray(skill.tags) ? [...skill.tags] : [],
  };
}

/** The A2A 1.0 card for a native card, served by the A2A bindings at the given URLs. */
export function toA2AAgentCard(card: AgentCard, options: ToA2AAgentCardOptions): A2AAgentCard {
  const fields = options.fields ?? {};
  const iface = (url: string, protocolBinding: A2AProtocolBinding): A2AAgentInterface => {
    const entry: A2AAgentInterface = { url, protocolBinding, protocolVersion: A2A_PROTOCOL_VERSION };
    if (options.tenant) entry.tenant = options.tenant;
    return entry;
  };
  const capabilities: A2AAgentCard['capabilities'] = { streaming: true };
  if (options.pushNotifications) capabilities.pushNotifications = true;
  if (options.extendedAgentCard) capabilities.extendedAgentCard = true;
  const out: A2AAgentCard = {
    name: card.name,
    description: card.description || card.name,
    version: fields.version || card.version || '1.0.0',
    supportedInterfaces: [iface(options.jsonRpcUrl, 'JSONRPC'), iface(options.restUrl, 'HTTP+JSON')],
    capabilities,
    defaultInputModes: [...(fields.defaultInputModes ?? DEFAULT_MODES)],
    defaultOutputModes: [...(fields.defaultOutputModes ?? DEFAULT_MODES)],
    skills: (card.skills ?? []).map(toA2ASkill),
  };
  if (fields.provider)
    out.provider = { organization: fields.provider.organization, url: fields.provider.url };
  if (fields.documentationUrl) out.documentationUrl = fields.documentationUrl;
  if (fields.iconUrl) out.iconUrl = fields.iconUrl;
  const sources: Record<string, SecuritySchemeSource> | SecuritySchemeSource[] | undefined =
    card.securitySchemes ?? (options.authenticator ? [options.authenticator.securityScheme] : undefined);
  const security = toA2ASecuritySchemes(sources);
  if (Object.keys(security.securitySchemes).length > 0) {
    out.securitySchemes = security.securitySchemes;
    out.securityRequirements = security.securityRequirements;
  }
  return out;
}

// -----------------------------------------------------------------------------------------------
// Client side

function str(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The card's interfaces in the server's order of preference; entries without url or binding are skipped. */
export function a2aInterfacesOf(json: unknown): A2AAgentInterface[] {
  if (!isRecord(json) || !Array.isArray(json.supportedInterfaces)) return [];
  const out: A2AAgentInterface[] = [];
  for (const entry of json.supportedInterfaces) {
    if (!isRecord(entry)) continue;
    const url = str(entry, 'url');
    const protocolBinding = str(entry, 'protocolBinding') ?? str(entry, 'protocol_binding');
    if (!url || !protocolBinding) continue;
    const iface: A2AAgentInterface = {
      url,
      protocolBinding,
      protocolVersion: str(entry, 'protocolVersion') ?? str(entry, 'protocol_version') ?? '',
    };
    const tenant = str(entry, 'tenant');
    if (tenant) iface.tenant = tenant;
    out.push(iface);
  }
  return out;
}

/**
 * A native scheme dict from a canonical A2A scheme (exactly one known wrapper key); undefined for
 * anything else, such as the official SDK's in-memory `{"scheme": {"$case": ...}}` form.
 */
function fromA2AScheme(json: unknown): SecuritySchemeDict | undefined {
  if (!isRecord(json)) return undefined;
  const keys = Object.keys(json);
  if (keys.length !== 1) return undefined;
  const body = json[keys[0]!];
  if (!isRecord(body)) return undefined;
  const description = str(body, 'description') ?? '';
  const metadata: JsonObject = {};
  switch (keys[0]) {
    case 'apiKeySecurityScheme': {
      const name = str(body, 'name');
      if (!name) return undefined;
      metadata.name = name;
      metadata.location = str(body, 'location') ?? 'header';
      return { type: 'apiKey', scheme: null, description, metadata };
    }
    case 'httpAuthSecurityScheme': {
      const scheme = str(body, 'scheme');
      if (!scheme) return undefined;
      const bearerFormat = str(body, 'bearerFormat');
      if (bearerFormat) metadata.bearer_format = bearerFormat;
      return { type: 'http', scheme: scheme.toLowerCase(), description, metadata };
    }
    case 'oauth2SecurityScheme': {
      if (!isRecord(body.flows)) return undefined;
      metadata.flows = body.flows;
      const metadataUrl = str(body, 'oauth2MetadataUrl');
      if (metadataUrl) metadata.oauth2_metadata_url = metadataUrl;
      return { type: 'oauth2', scheme: null, description, metadata };
    }
    case 'openIdConnectSecurityScheme': {
      const url = str(body, 'openIdConnectUrl');
      if (!url) return undefined;
      metadata.open_id_connect_url = url;
      return { type: 'openIdConnect', scheme: null, description, metadata };
    }
    case 'mtlsSecurityScheme':
      return { type: 'mutualTLS', scheme: null, description, metadata };
    default:
      return undefined;
  }
}

/**
 * A native card from an A2A card (1.0; tolerant of missing fields): `url` is the preferred interface's
 * URL; `metadata.a2a` keeps the interfaces, the protocol version and the security requirements.
 * Scheme entries that are not canonical ProtoJSON are left out rather than guessed at.
 */
export function fromA2AAgentCard(json: unknown): AgentCard {
  const record = isRecord(json) ? json : {};
  const interfaces = a2aInterfacesOf(record);
  const preferred = interfaces[0];
  const card: AgentCard = {
    name: str(record, 'name') ?? '',
    description: str(record, 'description') ?? '',
    url: preferred?.url ?? str(record, 'url') ?? '',
  };
  const version = str(record, 'version');
  if (version) card.version = version;
  const capabilities = isRecord(record.capabilities) ? record.capabilities : {};
  card.capabilities = { streaming: capabilities.streaming === true };
  if (Array.isArray(record.skills)) {
    card.skills = record.skills.filter(isRecord).flatMap((skill): AgentSkill[] => {
      const id = str(skill, 'id');
      if (!id) return [];
      const out: AgentSkill = { id, name: str(skill, 'name') ?? id };
      const description = str(skill, 'description');
      if (description) out.description = description;
      if (Array.isArray(skill.tags))
        out.tags = skill.tags.filter((tag): tag is string => typeof tag === 'string');
      return [out];
    });
  }
  if (isRecord(record.securitySchemes)) {
    const schemes: Record<string, SecuritySchemeDict> = {};
    for (const [name, value] of Object.entries(record.securitySchemes)) {
      const scheme = fromA2AScheme(value);
      if (scheme) schemes[name] = scheme;
    }
    if (Object.keys(schemes).length > 0) card.securitySchemes = schemes;
  }
  const a2a: JsonObject = {
    supportedInterfaces: interfaces.map((entry) => ({ ...entry })),
    capabilities: { ...capabilities },
  };
  if (preferred?.protocolVersion) a2a.protocolVersion = preferred.protocolVersion;
  if (Array.isArray(record.securityRequirements)) a2a.securityRequirements = record.securityRequirements;
  for (const key of ['provider', 'documentationUrl', 'iconUrl', 'defaultInputModes', 'defaultOutputModes']) {
    if (record[key] !== undefined) a2a[key] = record[key];
  }
  card.metadata = { a2a };
  return card;
}
