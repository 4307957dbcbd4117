export { createAuditStore, type AuditStore, type AuditRecord } from './audit-store.js';
export { auditRoutes } from './audit-routes.js';
