export { createPolicyStore, type PolicyStore, type PolicyVersionRow, type ActivePolicy } from './policy-store.js';
export { createPolicyService, type PolicyService, type PolicyEvents, documentOf } from './policy-service.js';
export { hashPolicy, validatePolicy } from './policy-document.js';
export { policyRoutes } from './policy-routes.js';
