import useSWR, { type SWRConfiguration } from "swr";
import type { Endpoint } from "@/lib/endpoint";
import { listDashboards } from "@/lib/dashboards/contract";
import { listDocuments, type DocumentStatus } from "@/lib/documents/contract";
import { getEmbeddingConfig } from "@/lib/documents/indexing-contract";
import {
  deliveryHealth,
  getQuietHours,
  listChannelConfigs,
  listDeadLetters,
  listDemoOutbox,
  listGroupSubscriptions,
  listInbox,
  listRules,
  listUnsubscribes,
} from "@/lib/notifications/contract";
import type { PageQuery } from "@/lib/pagination";
import { callApi, endpointUrl, type ApiClientError, type CallInput, type ResponseOf } from "./api-client";

/*
 * swr hooks for every read the pages make, on the typed client. The cache key is the request URL,
 * so two components reading the same thing share one request, and a write revalidates by URL.
 * Pages render on the server first and hand that answer in as `fallbackData`.
 */

/** A GET through the typed client, cached and revalidated by swr under its URL. */
export function useApiRead<E extends Endpoint>(endpoint: E, input: Pick<CallInput<E>, "params" | "query">, options: SWRConfiguration<ResponseOf<E>, ApiClientError> = {}) {
  const url = endpointUrl(endpoint, input);
  return useSWR<ResponseOf<E>, ApiClientError>(url, () => callApi(endpoint, input as CallInput<E>), options);
}

type Fallback<E> = ResponseOf<E> | undefined;

export function useDashboards(fallbackData: Fallback<typeof listDashboards>) {
  return useApiRead(listDashboards, { query: {} }, { fallbackData });
}

/**
 * Status chips follow other admins' uploads every few seconds, queued index jobs every 2 s, and progress
 * bars every 0.7 s while anything indexes: one list request per open tab (none while it is hidden).
 */
export const DOCUMENTS_POLL_MS = 4000;
export const DOCUMENTS_QUEUED_POLL_MS = 2000;
export const DOCUMENTS_INDEXING_POLL_MS = 700;

export function useDocuments(filter: { q: string; status: "" | DocumentStatus; limit: number }, fallbackData: Fallback<typeof listDocuments>) {
  return useApiRead(
    listDocuments,
    { query: { q: filter.q.trim() || undefined, status: filter.status || undefined, limit: filter.limit } },
    {
      fallbackData,
      keepPreviousData: true,
      refreshInterval: (latest) =>
        latest?.items.some((d) => d.status === "indexing")
          ? DOCUMENTS_INDEXING_POLL_MS
          : latest?.items.some((d) => d.index_job?.state === "queued")
            ? DOCUMENTS_QUEUED_POLL_MS
            : DOCUMENTS_POLL_MS,
    },
  );
}

export function useEmbeddingConfig(fallbackData: Fallback<typeof getEmbeddingConfig>) {
  return useApiRead(getEmbeddingConfig, {}, { fallbackData });
}

/** While a rule's run waits for evaluation or its deliveries are under way, the rules and delivery health follow it every 2 s. */
export const RULE_RUN_POLL_MS = 2000;
const UNDER_WAY = new Set(["pending", "sending", "retrying"]);
const runUnderWay = (rule: ResponseOf<typeof listRules>["items"][number]) =>
  rule.last_run?.status === "queued" || (rule.last_run?.deliveries.some((d) => UNDER_WAY.has(d.status)) ?? false);

/** What the notifications admin page reads; the health window and the pages are the server render's. */
export function useNotificationsAdmin(initial: {
  channels: Fallback<typeof listChannelConfigs>;
  rules: Fallback<typeof listRules>;
  groups: Fallback<typeof listGroupSubscriptions>;
  unsubscribes: Fallback<typeof listUnsubscribes>;
  quietHours: Fallback<typeof getQuietHours>;
  health: Fallback<typeof deliveryHealth>;
  deadLetters: Fallback<typeof listDeadLetters>;
  demoOutbox: Fallback<typeof listDemoOutbox>;
  healthHours: number;
  listPage: PageQuery;
  deadLetterPage: PageQuery;
}) {
  const channels = useApiRead(listChannelConfigs, {}, { fallbackData: initial.channels });
  const rules = useApiRead(listRules, { query: initial.listPage }, { fallbackData: initial.rules, refreshInterval: (latest) => (latest?.items.some(runUnderWay) ? RULE_RUN_POLL_MS : 0) });
  const groups = useApiRead(listGroupSubscriptions, { query: initial.listPage }, { fallbackData: initial.groups });
  const unsubscribes = useApiRead(listUnsubscribes, { query: initial.listPage }, { fallbackData: initial.unsubscribes });
  const quietHours = useApiRead(getQuietHours, {}, { fallbackData: initial.quietHours });
  const health = useApiRead(deliveryHealth, { query: { hours: initial.healthHours, limit: 50 } }, { fallbackData: initial.health, refreshInterval: () => (rules.data?.items.some(runUnderWay) ? RULE_RUN_POLL_MS : 0) });
  const deadLetters = useApiRead(listDeadLetters, { query: initial.deadLetterPage }, { fallbackData: initial.deadLetters });
  const demoOutbox = useApiRead(listDemoOutbox, { query: initial.deadLetterPage }, { fallbackData: initial.demoOutbox, refreshInterval: () => (rules.data?.items.some(runUnderWay) ? RULE_RUN_POLL_MS : 0) });
  return {
    channels: channels.data,
    rules: rules.data,
    groups: groups.data,
    unsubscribes: unsubscribes.data,
    quietHours: quietHours.data,
    health: health.data,
    deadLetters: deadLetters.data,
    demoOutbox: demoOutbox.data,
    /** After a write: read everything on the page again. */
    refresh: () => Promise.all([channels, rules, groups, unsubscribes, quietHours, health, deadLetters, demoOutbox].map((read) => read.mutate())),
  };
}

/** The signed-in user's latest `limit` in-app notifications and unread count, every `refreshSeconds`. */
export function useInbox(refreshSeconds: number, limit: number) {
  return useApiRead(listInbox, { query: { limit } }, { refreshInterval: refreshSeconds * 1000 });
}
