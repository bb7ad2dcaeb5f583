// The start-up check the runtime calls: one warn line per identity whose certificate is expired,
// not yet valid, or expires within `warnDays`.
import type { Logger } from "../types.ts";
import { checkCertificateExpiry, type CertificateExpiry } from "./identity-store.ts";

export function warnExpiringCertificates(params: {
  identities: Array<{ aid: string; certPem: string }>;
  now: number;
  logger: Logger;
  warnDays?: number;
}): Array<{ aid: string } & CertificateExpiry> {
  const out: Array<{ aid: string } & CertificateExpiry> = [];
  for (const identity of params.identities) {
    const check = checkCertificateExpiry({ certPem: identity.certPem, now: params.now, ...(params.warnDays !== undefined ? { warnDays: params.warnDays } : {}) });
    out.push({ aid: identity.aid, ...check });
    if (check.warn) params.logger.log("warn", "identity.certificate-" + check.reason, { aid: identity.aid, daysLeft: check.daysLeft });
  }
  return out;
}
