import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";

export const UserIdParams = z.object({ id: z.string().min(1).max(200).describe("user id") });

export const endOwnSessions = defineEndpoint({
  method: "delete",
  path: "/api/v1/me/sessions",
  summary: "Sign out everywhere",
  description:
    "Ends every browser session of the caller, on every device and server, this one included (the next request of each answers 401). Bearer tokens are not sessions: they stay valid until they expire.",
  tags: ["Sessions"],
  access: "user",
  status: 204,
});

export const endUserSessions = defineEndpoint({
  method: "delete",
  path: "/api/v1/users/{id}/sessions",
  summary: "End a user's sessions",
  description: "Ends every browser session of a user of the caller's organization at once. A user of another organization is not found (404).",
  tags: ["Sessions"],
  access: "admin",
  params: UserIdParams,
  status: 204,
  errors: [404],
});
