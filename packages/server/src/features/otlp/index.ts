export { createOtlpService, type OtlpService, normalizeServiceName, UNKNOWN_SERVICE } from './otlp-service.js';
export { otlpRoutes } from './otlp-routes.js';
export { createOtlpGrpcServer, type OtlpGrpcServer } from './otlp-grpc-server.js';
