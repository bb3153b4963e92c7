import "server-only";
import { defineOperation } from "@/lib/operation";
import { testChannel as sendTestMessage } from "./admin/channel-test";
import * as channels from "./admin/channels";
import * as deadLetters from "./admin/dead-letters";
import * as demoOutbox from "./admin/demo-outbox";
import * as health from "./admin/delivery-health";
import * as groups from "./admin/group-subscriptions";
import * as quietHours from "./admin/quiet-hours";
import * as rules from "./admin/rules";
import * as trigger from "./admin/trigger-rule";
import * as unsubscribes from "./admin/unsubscribes";
import { systemClock } from "./clock";
import * as contract from "./contract";
import * as inbox from "./inbox";
import { defaultRuntime } from "./pipeline/runtime";

/* ---------- channel providers ---------- */

export const listChannelConfigs = defineOperation(contract.listChannelConfigs, ({ principal }) => channels.listChannelConfigs(principal));

export const putChannelConfig = defineOperation(contract.putChannelConfig, ({ principal, params, body }) => channels.putChannelConfig(principal, params.kind, body));

export const testChannel = defineOperation(contract.testChannel, ({ principal, params }) => sendTestMessage(principal, params.kind, systemClock.now()));

/* ---------- rules ---------- */

export const listBaseRules = defineOperation(contract.listBaseRules, async () => rules.listBaseRules());

export const createRule = defineOperation(contract.createRule, ({ principal, body }) => rules.createRule(principal, body, systemClock.now()));

export const listRules = defineOperation(contract.listRules, ({ principal, query }) => rules.listRules(principal, query, systemClock.now()));

export const getRule = defineOperation(contract.getRule, ({ principal, params }) => rules.getRule(principal, params.id, systemClock.now()));

export const updateRule = defineOperation(contract.updateRule, ({ principal, params, body }) => rules.updateRule(principal, params.id, body, systemClock.now()));

export const triggerRule = defineOperation(contract.triggerRule, async ({ principal, params }) => trigger.triggerRule(principal, params.id, await defaultRuntime()));

/* ---------- group subscriptions and unsubscribes ---------- */

export const createGroupSubscription = defineOperation(contract.createGroupSubscription, ({ principal, body }) => groups.createGroupSubscription(principal, body, systemClock.now()));

export const listGroupSubscriptions = defineOperation(contract.listGroupSubscriptions, ({ principal, query }) => groups.listGroupSubscriptions(principal, query));

export const deleteGroupSubscription = defineOperation(contract.deleteGroupSubscription, ({ principal, params }) => groups.deleteGroupSubscription(principal, params.id));

export const createUnsubscribe = defineOperation(contract.createUnsubscribe, ({ principal, body }) => unsubscribes.createUnsubscribe(principal, body, systemClock.now()));

export const listUnsubscribes = defineOperation(contract.listUnsubscribes, ({ principal, query }) => unsubscribes.listUnsubscribes(principal, query));

export const deleteUnsubscribe = defineOperation(contract.deleteUnsubscribe, ({ principal, params }) => unsubscribes.deleteUnsubscribe(principal, params.id));

/* ---------- quiet hours ---------- */

export const getQuietHours = defineOperation(contract.getQuietHours, ({ principal }) => quietHours.getQuietHours(principal));

export const putQuietHours = defineOperation(contract.putQuietHours, ({ principal, body }) => quietHours.putQuietHours(principal, body, systemClock.now()));

/* ---------- dead letters and delivery health ---------- */

export const listDemoOutbox = defineOperation(contract.listDemoOutbox, ({ principal, query }) => demoOutbox.listDemoOutbox(principal, query));

export const downloadDemoOutboxAttachment = defineOperation(contract.downloadDemoOutboxAttachment, ({ principal, params }) =>
  demoOutbox.openDemoOutboxAttachment(principal, params.id, params.file_id),
);

export const listDeadLetters = defineOperation(contract.listDeadLetters, ({ principal, query }) => deadLetters.listDeadLetters(principal, query));

export const requeueDeadLetter = defineOperation(contract.requeueDeadLetter, async ({ principal, params }) => deadLetters.requeueDeadLetter(principal, params.id, await defaultRuntime()));

export const deliveryHealth = defineOperation(contract.deliveryHealth, ({ principal, query }) => health.deliveryHealth(principal, query, systemClock.now()));

/* ---------- inbox ---------- */

export const listInbox = defineOperation(contract.listInbox, ({ principal, query }) => inbox.listInbox(principal, query));

export const markInboxRead = defineOperation(contract.markInboxRead, ({ principal, params }) => inbox.markInboxRead(principal, params.id, systemClock.now()));
