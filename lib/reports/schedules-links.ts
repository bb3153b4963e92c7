import "server-only";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { deriveKey } from "@/lib/secrets";
import { config } from "@/lib/config";
import { withTenant } from "@/lib/db/tenant";
import { Gone, Unauthenticated, notFound } from "@/lib/errors";
import { storedFileResponse } from "@/lib/file-response";

/**
 * Signed links of scheduled reports, HS256 JWTs like embed tokens, each kind with its own derived key and
 * audience (never valid as one another, nor as a bearer token):
 * - a download link names one rendered file (organization, file, scope) and expires after DOWNLOAD_LINK_SECONDS;
 *   the file is read back by its id and scope, so a link opens that one render and nothing of another scope;
 * - an unsubscribe link names a schedule and one recipient, and lasts as long as a report e-mail is worth keeping.
 */
export const DOWNLOAD_LINK_SECONDS = 24 * 3600;
const UNSUBSCRIBE_LINK_SECONDS = 365 * 24 * 3600;

const DOWNLOAD = { audience: "quarry-report-file", key: () => new Uint8Array(deriveKey("report-download")) };
const UNSUBSCRIBE = { audience: "quarry-report-unsubscribe", key: () => new Uint8Array(deriveKey("report-unsubscribe")) };

async function sign(kind: typeof DOWNLOAD, claims: Record<string, string>, expiresAt: Date) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setAudience(kind.audience)
    .setIssuedAt()
    .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
    .sign(kind.key());
}

async function verify(kind: typeof DOWNLOAD, token: string, what: string, now: Date) {
  try {
    return (await jwtVerify(token, kind.key(), { audience: kind.audience, algorithms: ["HS256"], currentDate: now })).payload as Record<string, unknown>;
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw new Gone(`This ${what} link has expired`);
    throw new Unauthenticated(`This ${what} link is not valid`);
  }
}

/** A download link for one rendered file, expiring at `expiresAt` (at most the file's own expiry). */
export async function downloadLink(file: { orgId: string; id: string; scopeKey: string }, expiresAt: Date): Promise<string> {
  const token = await sign(DOWNLOAD, { org: file.orgId, fid: file.id, scp: file.scopeKey }, expiresAt);
  return `${config().publicUrl}/api/v1/report-files/${token}`;
}

/** The file behind a download link, as a Response (attachment). */
export async function openReportFile(token: string, now = new Date()): Promise<Response> {
  const { org, fid, scp } = await verify(DOWNLOAD, token, "download", now);
  if (typeof org !== "string" || typeof fid !== "string" || typeof scp !== "string") throw new Unauthenticated("This download link is not valid");
  const file = await withTenant({ orgId: org }, (tx) => tx.reportFile.findFirst({ where: { id: fid, scopeKey: scp } }));
  if (!file) throw notFound("Report file");
  if (file.expiresAt <= now) throw new Gone("This report file has expired");
  return storedFileResponse(file, "attachment");
}

/**
 * The unsubscribe links of one recipient (a user id or an address) of a schedule: `oneClick` for the
 * List-Unsubscribe header (mail clients POST to it, RFC 8058), `page` for the e-mail's text (a page with a
 * button, so a link scanner following it unsubscribes no one).
 */
export async function unsubscribeLinks(orgId: string, scheduleId: string, recipient: string, now: Date): Promise<{ oneClick: string; page: string }> {
  const token = await sign(UNSUBSCRIBE, { org: orgId, sch: scheduleId, rcp: recipient }, new Date(now.getTime() + UNSUBSCRIBE_LINK_SECONDS * 1000));
  return { oneClick: `${config().publicUrl}/api/v1/report-unsubscribe/${token}`, page: `${config().publicUrl}/reports/unsubscribe/${token}` };
}

/** Records an unsubscribe link's recipient as no longer receiving its schedule (repeating it is harmless). */
export async function unsubscribe(token: string, now = new Date()) {
  const { org, sch, rcp } = await verify(UNSUBSCRIBE, token, "unsubscribe", now);
  if (typeof org !== "string" || typeof sch !== "string" || typeof rcp !== "string") throw new Unauthenticated("This unsubscribe link is not valid");
  return withTenant({ orgId: org }, async (tx) => {
    const schedule = await tx.reportSchedule.findUnique({ where: { id: sch }, select: { name: true } });
    if (!schedule) throw notFound("Report schedule");
    await tx.reportUnsubscribe.upsert({ where: { scheduleId_recipient: { scheduleId: sch, recipient: rcp } }, create: { orgId: org, scheduleId: sch, recipient: rcp, createdAt: now }, update: {} });
    return { schedule_name: schedule.name, recipient: rcp, unsubscribed: true as const };
  });
}
