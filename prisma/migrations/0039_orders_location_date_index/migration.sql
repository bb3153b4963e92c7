-- The revenue_vs_target KPI sums one location's orders of one month per target (lib/query/kpi-catalog.ts). On
-- (org_id, location_id) alone that read every order of the location and filtered the month out: the KPI grew with the
-- whole history (x17 from 10x to 100x, docs/performance.md). With the date in the key it reads the month's range:
-- 14.4 -> 1.3 ms at 1x, 99.4 -> 11.6 ms at 10x (EXPLAIN ANALYZE as the reader; issue 31). It serves whatever (org_id, location_id) served, so
-- that index goes.
CREATE INDEX orders_org_location_date_idx ON orders (org_id, location_id, order_date);
DROP INDEX orders_org_location_idx;
