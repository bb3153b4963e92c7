"use client";

import type { z } from "zod";
import type { PageQuery } from "@/lib/pagination";
import type { ResponseOf } from "@/components/api-client";
import { useNotificationsAdmin } from "@/components/api-hooks";
import type {
  DeliveryHealth,
  deliveryHealth,
  getQuietHours,
  listChannelConfigs,
  listDeadLetters,
  listDemoOutbox,
  listGroupSubscriptions,
  listRules,
  listUnsubscribes,
} from "@/lib/notifications/contract";
import { QuietHoursEditor, type QuietHours } from "./quiet-hours-editor";
import type { BaseRule } from "./rule-form";
import { ChannelsSection } from "./sections/channels-section";
import { DeadLettersSection } from "./sections/dead-letters-section";
import { RuleNamesProvider } from "./sections/parts";
import { GroupsSection } from "./sections/groups-section";
import { HealthSection } from "./sections/health-section";
import { OutboxSection } from "./sections/outbox-section";
import { RulesSection } from "./sections/rules-section";
import { UnsubscribesSection } from "./sections/unsubscribes-section";
import styles from "./notifications.module.css";

type Health = z.output<typeof DeliveryHealth>;

/** The server render's answers of the page's reads (the same shapes the API answers); swr keeps them fresh. */
export interface NotificationsAdminProps {
  channels: ResponseOf<typeof listChannelConfigs>;
  rules: ResponseOf<typeof listRules>;
  baseRules: BaseRule[];
  groups: ResponseOf<typeof listGroupSubscriptions>;
  unsubscribes: ResponseOf<typeof listUnsubscribes>;
  quietHours: ResponseOf<typeof getQuietHours> & QuietHours;
  health: ResponseOf<typeof deliveryHealth>;
  healthHours: number;
  /** The page of rules, groups and unsubscribes the server render read (the forms offer the rules and groups in it). */
  listPage: PageQuery;
  deadLetters: ResponseOf<typeof listDeadLetters>;
  deadLetterPage: PageQuery;
  /** The demo's e-mail outbox (the first page, newest first); shown while the e-mail channel is the outbox. */
  demoOutbox: ResponseOf<typeof listDemoOutbox>;
}

/** The notifications admin page: a summary, then one component per section (./sections), all over the same live reads. */
export function NotificationsAdmin(props: NotificationsAdminProps) {
  const { baseRules, healthHours, quietHours } = props;
  const live = useNotificationsAdmin(props);
  const channels = (live.channels ?? props.channels).items;
  const rulePage = live.rules ?? props.rules;
  const groupPage = live.groups ?? props.groups;
  const unsubscribePage = live.unsubscribes ?? props.unsubscribes;
  const deadLetterPage = live.deadLetters ?? props.deadLetters;
  const rules = rulePage.items;
  const health = live.health ?? props.health;
  const outbox = live.demoOutbox ?? props.demoOutbox;
  const outboxChannel = channels.some((c) => c.config.demo_outbox === true);
  const refresh = () => void live.refresh();

  const usable = channels.filter((c) => c.configured && c.enabled).map((c) => c.kind);
  // Rules are named by their names wherever a delivery, group or opt-out refers to one (the key on hover).
  const ruleNames = new Map([...baseRules.map((b) => [b.key, b.name] as const), ...rules.map((r) => [r.key, r.name] as const)]);

  return (
    <RuleNamesProvider value={ruleNames}>
      <div className={styles.summary}>
        <div className="card"><h2>{usable.length} of {channels.length}</h2><p>channels ready</p></div>
        <div className="card"><h2>{rules.filter((r) => r.enabled).length}</h2><p>active rules</p></div>
        <div className="card">
          <h2>{summaryRate(health)}</h2>
          <p>delivered, last {healthHours} h</p>
        </div>
        <div className="card"><h2 className={deadLetterPage.total > 0 ? styles.failed : undefined}>{deadLetterPage.total}</h2><p>dead letters</p></div>
      </div>

      <ChannelsSection channels={channels} refresh={refresh} />
      <RulesSection rulePage={rulePage} baseRules={baseRules} usableChannels={usable} refresh={refresh} />
      <GroupsSection groupPage={groupPage} rules={rules.filter((r) => r.default_channels.includes("email"))} refresh={refresh} />
      <UnsubscribesSection unsubscribePage={unsubscribePage} rules={rules} groups={groupPage.items} refresh={refresh} />

      <section className={styles.section} aria-labelledby="quiet-h">
        <h2 id="quiet-h">Quiet hours</h2>
        <QuietHoursEditor initial={quietHours} onSaved={refresh} />
      </section>

      <HealthSection health={health} hours={healthHours} />
      {(outboxChannel || outbox.total > 0) && <OutboxSection outbox={outbox} />}
      <DeadLettersSection deadLetterPage={deadLetterPage} refresh={refresh} />
    </RuleNamesProvider>
  );
}

function summaryRate(health: Health): string {
  const delivered = health.channels.reduce((n, c) => n + c.delivered, 0);
  const dead = health.channels.reduce((n, c) => n + c.dead, 0);
  return delivered + dead === 0 ? "—" : `${Math.round((delivered / (delivered + dead)) * 100)}%`;
}
