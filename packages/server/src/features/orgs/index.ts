export { createOrgStore, type OrgStore, type Organization } from './org-store.js';
export { createOrgService, type OrgService } from './org-service.js';
export { planLimits } from './plans.js';
