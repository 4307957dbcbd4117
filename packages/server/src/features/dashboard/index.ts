export { createDashboardStore, type DashboardStore } from './dashboard-store.js';
export { createDashboardService, type DashboardService } from './dashboard-service.js';
export { dashboardRoutes } from './dashboard-routes.js';
export { createAgentWindowStats, type AgentWindowStats, type WindowStats } from './agent-window-stats.js';
export { createPriceBook, BUILT_IN_PRICES, BUILT_IN_PRICES_DATE, type PriceBook } from './model-prices.js';
