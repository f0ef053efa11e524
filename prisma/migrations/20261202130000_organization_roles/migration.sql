-- Organization settings that admins choose (issue 19, roles). One row per organization that
-- changed a setting; an organization without a row has the defaults, so the row is created on
-- the first change. `members_manage_team_knowledge_bases`: whether a member (not only an admin)
-- may create, delete and set the AWS keys of the TEAM knowledge bases of their own teams.
-- Off by default: only admins change knowledge bases until an admin allows it.
CREATE TABLE "organization_settings" (
    "organization_id" TEXT NOT NULL,
    "members_manage_team_knowledge_bases" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "organization_settings_pkey" PRIMARY KEY ("organization_id")
);

GRANT SELECT, INSERT, UPDATE, DELETE ON organization_settings TO context_search_tenant;

ALTER TABLE organization_settings ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON organization_settings TO context_search_tenant
  USING (organization_id = current_setting('app.organization_id', true))
  WITH CHECK (organization_id = current_setting('app.organization_id', true));
