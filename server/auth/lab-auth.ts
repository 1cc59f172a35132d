/**
 * Sign-in, sessions and their cookies: Better Auth on the lab's database
 * (Prisma adapter), with passwords as argon2id. The lab adds two ways in
 * as a Better Auth plugin, so they get the library's cookies, sessions
 * and rate limits: the loopback token URL (local-token.ts) and the
 * workshop join (a participant: a display name, no password).
 *
 * Who may do what is not decided here: access-policy.ts does that.
 */
import type { IncomingHttpHeaders } from "node:http";
import { randomUUID } from "node:crypto";
import { betterAuth, type BetterAuthPlugin } from "better-auth";
import { APIError, createAuthEndpoint, getSessionFromCtx } from "better-auth/api";
import { setSessionCookie } from "better-auth/cookies";
import { fromNodeHeaders } from "better-auth/node";
import { z } from "zod";
import { LOCAL_USER } from "../persistence";
import type { AccountRepository } from "../persistence/account-repository";
import type { VerificationRepository } from "../persistence/verification-repository";
import type { WorkshopRepository } from "../persistence/workshop-repository";
import { consumeLocalToken, LOCAL_TOKEN_PATH } from "./local-token";
import { hashPassword, verifyPassword } from "./password-hash";
import { MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS } from "./accounts";
import { isRole, type Actor } from "./roles";

export const AUTH_BASE_PATH = "/api/auth";
export const JOIN_PATH = "/workshop/join";
/** What the join page shows before anyone types a name: the workshop a code opens, or that it opens none. */
export const JOIN_INFO_PATH = "/workshop/join-info";
/** The header the lab's HTTP edge sets to the connection's address (replacing any the client sent): the rate limits' key. */
export const CLIENT_IP_HEADER = "x-mgpulab-client-ip";

export interface RateLimit {
  max: number;
  windowSeconds: number;
}

export interface AuthSettings {
  secret: string;
  /** The lab's own origins (its pages): Better Auth checks Origin against them too. */
  origins: () => readonly string[];
  sessionSeconds: number;
  loginRateLimit: RateLimit;
  joinRateLimit: RateLimit;
  /** Cookies marked Secure: a lab served over https (behind a proxy). */
  secureCookies: boolean;
  /** A participant just joined: give them their copies of the workshop's scenarios. */
  onParticipantJoined: (participant: { userId: string; workshopId: string }) => Promise<void>;
}

const joinBodySchema = z.object({
  code: z.string().trim().min(1).max(64),
  name: z.string().trim().min(1, "type the name the class will see").max(80),
});

/** What sign-in reads and writes besides Better Auth's own tables. */
export interface AuthStores {
  accounts: AccountRepository;
  workshops: Pick<WorkshopRepository, "byJoinCode">;
  verifications: VerificationRepository;
}

export type LabAuth = ReturnType<typeof createLabAuth>;

export function createLabAuth(stores: AuthStores, settings: AuthSettings) {
  return betterAuth({
    basePath: AUTH_BASE_PATH,
    secret: settings.secret,
    database: stores.accounts.betterAuthAdapter(),
    trustedOrigins: () => [...settings.origins()],
    emailAndPassword: {
      enabled: true,
      // Accounts are made by an admin (or the first-admin command), never by whoever finds the page.
      disableSignUp: true,
      minPasswordLength: MIN_PASSWORD_CHARS,
      maxPasswordLength: MAX_PASSWORD_CHARS,
      password: { hash: hashPassword, verify: ({ hash, password }) => verifyPassword(hash, password) },
    },
    user: {
      additionalFields: {
        role: { type: "string", required: false, defaultValue: "member", input: false },
        workshopId: { type: "string", required: false, input: false },
        removedAt: { type: "date", required: false, input: false },
      },
    },
    session: { expiresIn: settings.sessionSeconds, updateAge: Math.min(24 * 3600, Math.floor(settings.sessionSeconds / 4)) },
    databaseHooks: {
      session: {
        create: {
          // A removed user has no password left; this closes every other way in too.
          before: async (session) => {
            return (await stores.accounts.maySignIn(session.userId)) ? undefined : false;
          },
        },
      },
    },
    rateLimit: {
      enabled: true,
      storage: "memory",
      window: 60,
      max: 300,
      customRules: {
        "/sign-in/email": { window: settings.loginRateLimit.windowSeconds, max: settings.loginRateLimit.max },
        // No guess limit on the token URL: its 192 random bits cannot be guessed, and a limit counted per
        // address let anyone on the machine (or behind the same NAT) lock the operator out of a fresh token.
        [LOCAL_TOKEN_PATH.slice(AUTH_BASE_PATH.length)]: false,
        // Guessing the current password here is guessing a password too.
        "/change-password": { window: settings.loginRateLimit.windowSeconds, max: settings.loginRateLimit.max },
        [JOIN_PATH]: { window: settings.joinRateLimit.windowSeconds, max: settings.joinRateLimit.max },
        // A code looked up is a code guessed: the same budget as joins.
        [JOIN_INFO_PATH]: { window: settings.joinRateLimit.windowSeconds, max: settings.joinRateLimit.max },
      },
    },
    advanced: {
      cookiePrefix: "mgpulab",
      useSecureCookies: settings.secureCookies,
      defaultCookieAttributes: { httpOnly: true, sameSite: "lax", path: "/" },
      ipAddress: { ipAddressHeaders: [CLIENT_IP_HEADER] },
    },
    telemetry: { enabled: false },
    // Wrong passwords and the derived base URL are not the operator's business; failures are.
    logger: { level: "error" },
    plugins: [labWaysIn(stores, settings)],
  });
}

/** The loopback token URL and the workshop join, as Better Auth endpoints. */
function labWaysIn(stores: AuthStores, settings: AuthSettings): BetterAuthPlugin {
  return {
    id: "mgpulab-ways-in",
    endpoints: {
      localToken: createAuthEndpoint(
        LOCAL_TOKEN_PATH.slice(AUTH_BASE_PATH.length),
        { method: "GET", query: z.object({ token: z.string().max(200) }) },
        async (ctx) => {
          if (!(await consumeLocalToken(stores.verifications, ctx.query.token))) throw ctx.redirect("/?link=spent");
          const user = await ctx.context.internalAdapter.findUserById(LOCAL_USER.id);
          if (!user) throw new APIError("INTERNAL_SERVER_ERROR", { message: "the local user is missing" });
          const session = await ctx.context.internalAdapter.createSession(user.id);
          await setSessionCookie(ctx, { session, user });
          throw ctx.redirect("/");
        },
      ),
      joinInfo: createAuthEndpoint(JOIN_INFO_PATH, { method: "GET", query: z.object({ code: z.string().trim().min(1).max(64) }) }, async (ctx) => {
        const workshop = await stores.workshops.byJoinCode(ctx.query.code);
        const current = workshop ? await getSessionFromCtx(ctx) : null;
        const currentUser = current?.user as { role?: unknown; workshopId?: unknown } | undefined;
        const mine = workshop !== null && currentUser?.role === "participant" && currentUser.workshopId === workshop.id;
        // As the join itself: an unknown code and a closed room read the same, except to who is in it already.
        if (!workshop || (workshop.closedAt !== null && !mine)) throw new APIError("NOT_FOUND", { message: "no open workshop has this code; check it with your facilitator" });
        return ctx.json({ title: workshop.title, ended: workshop.endedAt !== null, rejoining: mine });
      }),
      joinWorkshop: createAuthEndpoint(JOIN_PATH, { method: "POST", body: joinBodySchema }, async (ctx) => {
        const workshop = await stores.workshops.byJoinCode(ctx.body.code);
        const current = workshop ? await getSessionFromCtx(ctx) : null;
        const currentUser = current?.user as { id: string; role?: unknown; workshopId?: unknown } | undefined;
        // The same browser joining again (another tab, a dropped connection) is the same participant,
        // also once the room is closed to newcomers or the workshop has ended.
        if (workshop && currentUser && currentUser.role === "participant" && currentUser.workshopId === workshop.id) {
          return ctx.json({ userId: currentUser.id, rejoined: true });
        }
        // An unknown code and a closed room read the same to a guesser.
        if (!workshop || workshop.closedAt !== null) throw new APIError("NOT_FOUND", { message: "no open workshop has this code; check it with your facilitator" });
        const userId = randomUUID();
        // In the admission queue until the workshop seats them (first come, first served).
        await stores.accounts.addParticipant({ id: userId, name: ctx.body.name, workshopId: workshop.id, waitingSince: new Date() });
        await settings.onParticipantJoined({ userId, workshopId: workshop.id });
        const user = await ctx.context.internalAdapter.findUserById(userId);
        if (!user) throw new APIError("INTERNAL_SERVER_ERROR", { message: "the participant was not stored" });
        const session = await ctx.context.internalAdapter.createSession(userId);
        await setSessionCookie(ctx, { session, user });
        return ctx.json({ userId, rejoined: false });
      }),
    },
  };
}

/** The signed-in person behind these request headers (the session cookie), or null. */
export async function actorOf(auth: LabAuth, headers: IncomingHttpHeaders): Promise<Actor | null> {
  const found = await auth.api.getSession({ headers: fromNodeHeaders(headers) }).catch(() => null);
  if (!found) return null;
  const user = found.user as typeof found.user & { role?: unknown; workshopId?: unknown; removedAt?: unknown };
  if (user.removedAt !== null && user.removedAt !== undefined) return null;
  return {
    userId: user.id,
    name: user.name,
    role: isRole(user.role) ? user.role : "member",
    workshopId: typeof user.workshopId === "string" ? user.workshopId : null,
    sessionId: found.session.id,
    expiresAt: new Date(found.session.expiresAt),
  };
}

/**
 * The actor again, from the database (every socket event re-checks): as it
 * is now (a changed role counts at once), or why its session is over.
 */
export async function recheckActor(accounts: Pick<AccountRepository, "session">, actor: Actor, now = new Date()): Promise<Actor | "expired" | "revoked"> {
  const session = await accounts.session(actor.sessionId);
  if (!session || session.user.removedAt !== null || !isRole(session.user.role)) return "revoked";
  if (session.expiresAt <= now) return "expired";
  return { ...actor, name: session.user.name, role: session.user.role, workshopId: session.user.workshopId, expiresAt: session.expiresAt };
}
