import {
  ValueError,
  nowIso,
  parseIsoTimestamp,
  type JsonObject,
  type SecurityContextLike,
} from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';

export interface SecurityContextInit {
  /** Stable id of the authenticated user, service, client or agent; its format is not interpreted. */
  principalId: string;
  /** The accepted credential or delegated access token, kept verbatim. */
  token: string;
  /** Absolute ISO 8601 expiry with a zone designator; null means no expiry. */
  expiresAt?: string | null;
  /** Defaults to the current UTC time. */
  issuedAt?: string;
  /** Defaults to a new empty object per instance. */
  metadata?: JsonObject;
}

const INIT_NAMES = optionNames<SecurityContextInit>({
  principalId: true,
  token: true,
  expiresAt: true,
  issuedAt: true,
  metadata: true,
});

export interface SecurityContextDict {
  principal_id: string;
  token: string;
  expires_at: string | null;
  issued_at: string;
  metadata: JsonObject;
}

/** The result of a successful authentication. Creating one verifies nothing. */
export class SecurityContext implements SecurityContextLike {
  readonly principalId: string;
  readonly token: string;
  readonly expiresAt: string | null;
  readonly issuedAt: string;
  readonly metadata: JsonObject;

  constructor(init: SecurityContextInit) {
    checkOptionNames('SecurityContext', init, INIT_NAMES);
    this.principalId = init.principalId;
    this.token = init.token;
    this.expiresAt = init.expiresAt ?? null;
    this.issuedAt = init.issuedAt ?? nowIso();
    this.metadata = init.metadata ?? {};
  }

  /**
   * True when now (UTC) is later than `expiresAt`; false without an expiry. A local check only:
   * no provider contact, no revocation check, no refresh.
   * @throws ValueError for an unparsable timestamp, TypeError for a timezone-naive one.
   */
  isExpired(now: Date = new Date()): boolean {
    if (this.expiresAt === null) return false;
    // A provider may store a non-string here (OAuth copies `expires_in` as it comes): not a timestamp.
    if (typeof this.expiresAt !== 'string')
      throw new ValueError(`expires_at is not an ISO timestamp: ${String(this.expiresAt)}`);
    const parsed = parseIsoTimestamp(this.expiresAt);
    if (parsed === undefined) throw new ValueError(`expires_at is not an ISO timestamp: ${this.expiresAt}`);
    if (parsed === null) throw new TypeError(`expires_at has no timezone: ${this.expiresAt}`);
    return now.getTime() > parsed.getTime();
  }

  /** A new object with the five fields, raw token included; metadata is shared, not copied. */
  toDict(): SecurityContextDict {
    return {
      principal_id: this.principalId,
      token: this.token,
      expires_at: this.expiresAt,
      issued_at: this.issuedAt,
      metadata: this.metadata,
    };
  }

  static fromDict(dict: SecurityContextDict): SecurityContext {
    return new SecurityContext({
      principalId: dict.principal_id,
      token: dict.token,
      expiresAt: dict.expires_at,
      issuedAt: dict.issued_at,
      metadata: dict.metadata,
    });
  }

  /** Keeps the raw token out of logs and `JSON.stringify`. Use `toDict()` to serialize it on purpose. */
  toJSON(): Omit<SecurityContextDict, 'token'> & { token: string } {
    return { ...this.toDict(), token: '[REDACTED]' };
  }
}
