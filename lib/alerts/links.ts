import "server-only";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { config } from "@/lib/config";
import { Gone, Unauthenticated } from "@/lib/errors";
import { deriveKey } from "@/lib/secrets";

/**
 * The signed link to an alert message's picture, for channels that link rather than attach it (webhooks, a Slack
 * webhook, the in-app inbox, the text of every message): an HS256 JWT with its own derived key and audience, never
 * valid as a report link, an embed token or a bearer token. It names one message, so it draws that message's widget
 * in that message's scope and nothing else; the picture is drawn when the link is opened (the data as of then).
 */
export const PICTURE_LINK_SECONDS = 7 * 24 * 3600;

const PICTURE = { audience: "quarry-alert-picture", key: () => new Uint8Array(deriveKey("alert-picture")) };

export async function pictureLink(target: { orgId: string; messageId: string }, expiresAt: Date): Promise<string> {
  const token = await new SignJWT({ org: target.orgId, msg: target.messageId })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setAudience(PICTURE.audience)
    .setIssuedAt()
    .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
    .sign(PICTURE.key());
  return `${config().publicUrl}/api/v1/alert-pictures/${token}`;
}

/** The organization and message a picture link names; 410 once expired, 401 for anything else that is not one. */
export async function readPictureLink(token: string, now = new Date()): Promise<{ orgId: string; messageId: string }> {
  let payload: Record<string, unknown>;
  try {
    payload = (await jwtVerify(token, PICTURE.key(), { audience: PICTURE.audience, algorithms: ["HS256"], currentDate: now })).payload;
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw new Gone("This picture link has expired");
    throw new Unauthenticated("This picture link is not valid");
  }
  if (typeof payload.org !== "string" || typeof payload.msg !== "string") throw new Unauthenticated("This picture link is not valid");
  return { orgId: payload.org, messageId: payload.msg };
}
