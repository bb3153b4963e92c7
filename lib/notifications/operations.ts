import "server-only";
import { defineOperation } from "@/lib/api/operation";
import { testChannel as sendTestMessage } from "./admin/channel-test";
import * as channels from "./admin/channels";
import * as deadLetters from "./admin/dead-letters";
import * as health from "./admin/delivery-health";
import * as groups from "./admin/group-subscriptions";
import * as quietHours from "./admin/quiet-hours";
import * as rules from "./admin/rules";
import * as trigger from "./admin/trigger-rule";
import * as unsubscribes from "./admin/unsubscribes";
import { systemClock } from "./clock";
import * as contract from "./contract";
import * as inbox from "./inbox";
import { defaultRuntime } from "./pipeline/worker";

/* ---------- channel providers ---------- */

export const listChannelConfigs = defineOperation(contract.listChannelConfigsEndpoint, ({ principal }) => channels.listChannelConfigs(principal));

export const putChannelConfig = defineOperation(contract.putChannelConfigEndpoint, ({ principal, params, body }) => channels.putChannelConfig(principal, params.kind, body));

export const testChannel = defineOperation(contract.testChannelEndpoint, ({ principal, params }) => sendTestMessage(principal, params.kind, systemClock.now()));

/* ---------- rules ---------- */

export const listBaseRules = defineOperation(contract.listBaseRulesEndpoint, async () => rules.listBaseRules());

export const createRule = defineOperation(contract.createRuleEndpoint, ({ principal, body }) => rules.createRule(principal, body, systemClock.now()));

export const listRules = defineOperation(contract.listRulesEndpoint, ({ principal }) => rules.listRules(principal, systemClock.now()));

export const getRule = defineOperation(contract.getRuleEndpoint, ({ principal, params }) => rules.getRule(principal, params.id, systemClock.now()));

export const updateRule = defineOperation(contract.updateRuleEndpoint, ({ principal, params, body }) => rules.updateRule(principal, params.id, body, systemClock.now()));

export const triggerRule = defineOperation(contract.triggerRuleEndpoint, async ({ principal, params }) => trigger.triggerRule(principal, params.id, await defaultRuntime()));

/* ---------- group subscriptions and unsubscribes ---------- */

export const createGroupSubscription = defineOperation(contract.createGroupSubscriptionEndpoint, ({ principal, body }) => groups.createGroupSubscription(principal, body, systemClock.now()));

export const listGroupSubscriptions = defineOperation(contract.listGroupSubscriptionsEndpoint, ({ principal }) => groups.listGroupSubscriptions(principal));

export const deleteGroupSubscription = defineOperation(contract.deleteGroupSubscriptionEndpoint, ({ principal, params }) => groups.deleteGroupSubscription(principal, params.id));

export const createUnsubscribe = defineOperation(contract.createUnsubscribeEndpoint, ({ principal, body }) => unsubscribes.createUnsubscribe(principal, body, systemClock.now()));

export const listUnsubscribes = defineOperation(contract.listUnsubscribesEndpoint, ({ principal }) => unsubscribes.listUnsubscribes(principal));

export const deleteUnsubscribe = defineOperation(contract.deleteUnsubscribeEndpoint, ({ principal, params }) => unsubscribes.deleteUnsubscribe(principal, params.id));

/* ---------- quiet hours ---------- */

export const getQuietHours = defineOperation(contract.getQuietHoursEndpoint, ({ principal }) => quietHours.getQuietHours(principal));

export const putQuietHours = defineOperation(contract.putQuietHoursEndpoint, ({ principal, body }) => quietHours.putQuietHours(principal, body, systemClock.now()));

/* ---------- dead letters and delivery health ---------- */

export const listDeadLetters = defineOperation(contract.listDeadLettersEndpoint, ({ principal, query }) => deadLetters.listDeadLetters(principal, query));

export const requeueDeadLetter = defineOperation(contract.requeueDeadLetterEndpoint, async ({ principal, params }) => deadLetters.requeueDeadLetter(principal, params.id, await defaultRuntime()));

export const deliveryHealth = defineOperation(contract.deliveryHealthEndpoint, ({ principal, query }) => health.deliveryHealth(principal, query, systemClock.now()));

/* ---------- inbox ---------- */

export const listInbox = defineOperation(contract.listInboxEndpoint, ({ principal, query }) => inbox.listInbox(principal, query.limit));

export const markInboxRead = defineOperation(contract.markInboxReadEndpoint, ({ principal, params }) => inbox.markInboxRead(principal, params.id, systemClock.now()));
