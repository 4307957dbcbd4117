export { webUiRoutes } from './web-ui-routes.js';
