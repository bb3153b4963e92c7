-- Embeds and public dashboards show data under the location scope of the person who made them
-- (issue 13 §3): an embed carries its creator's scope, a published version its publisher's.
-- An empty list means every location of the organization, as in users.location_ids (a scoped
-- principal always has at least one id: the location claim refuses an empty list).
ALTER TABLE dashboard_embeds ADD COLUMN location_ids text[] NOT NULL DEFAULT '{}';
ALTER TABLE dashboard_versions ADD COLUMN publisher_location_ids text[] NOT NULL DEFAULT '{}';

-- Grants and versions made before this migration take the scope their author has today, so a
-- location-scoped general manager's existing embed links stop showing every location.
UPDATE dashboard_embeds e SET location_ids = u.location_ids
  FROM users u WHERE u.id = e.created_by AND u.org_id = e.org_id AND cardinality(u.location_ids) > 0;
UPDATE dashboard_versions v SET publisher_location_ids = u.location_ids
  FROM users u WHERE u.id = v.published_by AND u.org_id = v.org_id AND cardinality(u.location_ids) > 0;
