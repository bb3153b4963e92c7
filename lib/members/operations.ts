import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./contract";
import * as invitations from "./invitations";
import * as members from "./members";
import * as passwordResets from "./password-resets";
import * as setup from "./setup";

export const listMembers = defineOperation(contract.listMembers, ({ principal, query }) => members.listMembers(principal, query));

export const updateMember = defineOperation(contract.updateMember, ({ principal, params, body }) => members.updateMember(principal, params.id, body));

export const deleteMember = defineOperation(contract.deleteMember, ({ principal, params }) => members.deleteMember(principal, params.id));

export const resetMemberPassword = defineOperation(contract.resetMemberPassword, ({ principal, params }) => passwordResets.resetMemberPassword(principal, params.id));

export const listInvitations = defineOperation(contract.listInvitations, ({ principal, query }) => invitations.listInvitations(principal, query));

export const inviteMember = defineOperation(contract.inviteMember, ({ principal, body }) => invitations.inviteMember(principal, body));

export const revokeInvitation = defineOperation(contract.revokeInvitation, ({ principal, params }) => invitations.revokeInvitation(principal, params.id));

export const acceptInvitation = defineOperation(contract.acceptInvitation, ({ body }) => invitations.acceptInvitation(body));

export const requestPasswordReset = defineOperation(contract.requestPasswordReset, async ({ body }) => {
  // Not awaited: the answer's time must not tell whether the address has an account.
  void passwordResets.requestPasswordReset(body.email);
  return { detail: passwordResets.RESET_REQUESTED };
});

export const completePasswordReset = defineOperation(contract.completePasswordReset, ({ body }) => passwordResets.completePasswordReset(body));

export const getSetup = defineOperation(contract.getSetup, async () => ({ open: await setup.isSetupOpen() }));

export const runSetup = defineOperation(contract.runSetup, ({ body }) => setup.runSetup(body));
